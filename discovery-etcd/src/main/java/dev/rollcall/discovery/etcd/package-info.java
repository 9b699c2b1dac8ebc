/**
 * The {@code etcd} discovery backend: candidate workers are the keys under a prefix in etcd, watched
 * from one revision to the next; and worker registration under leases that etcd deletes when a
 * worker stops keeping them alive.
 *
 * <p>Public: {@link dev.rollcall.discovery.etcd.EtcdWorkerDiscoveryProvider} and
 * {@link dev.rollcall.discovery.etcd.EtcdRegistrationProvider} (both of type {@code etcd}, found by
 * {@link java.util.ServiceLoader}) (the registration it creates is package-private). Users
 * select the backend with {@code rollcall.discovery.type=etcd}; see the module's README for the keys.
 */
package dev.rollcall.discovery.etcd;
