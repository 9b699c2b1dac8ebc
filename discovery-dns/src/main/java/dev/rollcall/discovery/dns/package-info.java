/**
 * The {@code dns} discovery backend: candidate workers are the A, AAAA or SRV records of one DNS
 * name, looked up again when their TTL runs out (clamped to a configured range).
 *
 * <p>Public: {@link dev.rollcall.discovery.dns.DnsWorkerDiscoveryProvider} (type {@code dns}, found
 * by {@link java.util.ServiceLoader}). Users select the backend with
 * {@code rollcall.discovery.type=dns}; see the module's README for the keys.
 */
package dev.rollcall.discovery.dns;
