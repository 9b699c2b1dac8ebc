/**
 * The {@code static} discovery backend: candidate workers listed in
 * {@code rollcall.discovery.static.endpoints}, in a watched file named by
 * {@code rollcall.discovery.static.file}, or both.
 *
 * <p>The package is called {@code staticlist} because {@code static} is a Java keyword. Only
 * {@link dev.rollcall.discovery.staticlist.StaticWorkerDiscoveryProvider} and
 * {@link dev.rollcall.discovery.staticlist.StaticWorkerDiscovery} are public; users select the
 * backend with {@code rollcall.discovery.type=static} and never construct either directly.
 */
package dev.rollcall.discovery.staticlist;
