/**
 * The {@code zookeeper} discovery backend: candidate workers are the children of a path in
 * ZooKeeper (Curator x-discovery instances, Rollcall JSON or plain URLs), followed through a
 * persistent recursive watch; and worker registration as ephemeral x-discovery nodes that
 * ZooKeeper deletes when a worker's session ends.
 *
 * <p>Public: {@link dev.rollcall.discovery.zookeeper.ZooKeeperWorkerDiscoveryProvider} and
 * {@link dev.rollcall.discovery.zookeeper.ZooKeeperRegistrationProvider} (both of type
 * {@code zookeeper}, found by {@link java.util.ServiceLoader}) (the registration it creates is
 * package-private). Users select the backend with
 * {@code rollcall.discovery.type=zookeeper}; see the module's README for the keys.
 */
package dev.rollcall.discovery.zookeeper;
