package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;

/**
 * Creates the {@code zookeeper} discovery backend ({@code rollcall.discovery.type=zookeeper}): the
 * candidate workers are the children of a path in ZooKeeper, each holding a Curator x-discovery
 * {@code ServiceInstance} JSON (as Curator's {@code ServiceDiscovery} and this module's registration
 * write them: the path is then {@code <basePath>/<serviceName>}), Rollcall's own JSON, or the
 * worker's URL alone. The module's README lists every key under {@code rollcall.discovery.zookeeper.}
 * with its default.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key (connection string, path, timeouts, backoff, digest user and password) and
 * throws {@link dev.rollcall.api.ConfigurationException} naming the full key for a bad one, never
 * the password; it does not contact ZooKeeper. The backend it returns does everything else on its
 * own daemon thread, {@code rollcall-zookeeper-watch} (and Curator's): see its
 * {@link WorkerDiscovery#start} and {@link WorkerDiscovery#close}.
 */
public final class ZooKeeperWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    static final String TYPE = "zookeeper";

    /** Needed by {@link java.util.ServiceLoader}. */
    public ZooKeeperWorkerDiscoveryProvider() {
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        return new ZooKeeperWorkerDiscovery(ZooKeeperSettings.read(settings));
    }
}
