package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.util.Objects;
import java.util.Optional;

/**
 * Registers workers in ZooKeeper ({@code rollcall.discovery.type=zookeeper} with
 * {@code rollcall.worker.register=true}): each worker is an ephemeral node {@code <path>/<id>}
 * holding a Curator x-discovery {@code ServiceInstance}, which ZooKeeper deletes when the worker's
 * session ends, {@code close()} deletes at once, and which is created again after a session expiry
 * (the module's README says more).
 *
 * <p>It reads the connection keys that {@link ZooKeeperWorkerDiscoveryProvider} reads (connect,
 * path, timeouts, backoff, user and password) and one of its own:
 * <ul>
 *   <li>{@code registration.id}: the worker's id, the name of its node {@code <path>/<id>} and the
 *       x-discovery instance id; default {@code <host>_<port>} of the advertised endpoint (e.g.
 *       {@code 10.0.0.5_7001}). Letters, digits and {@code - _ . : @ [ ]} only.
 * </ul>
 * A dead worker leaves discovery when its session times out: {@code session-timeout}.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key (throwing {@link ConfigurationException} naming a bad one) and does not contact
 * ZooKeeper; the registration's {@code start()} does, and blocks until the node exists.
 */
public final class ZooKeeperRegistrationProvider implements WorkerRegistrationProvider {

    static final String ID = ZooKeeperKeys.relative(ZooKeeperKeys.REGISTRATION_ID);

    /** Needed by {@link java.util.ServiceLoader}. */
    public ZooKeeperRegistrationProvider() {
    }

    @Override
    public String type() {
        return ZooKeeperWorkerDiscoveryProvider.TYPE;
    }

    @Override
    public WorkerRegistration create(WorkerInfo self, Settings settings) {
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(settings, "settings");
        Optional<String> id = settings.find(ZooKeeperKeys.REGISTRATION_ID);
        ZooKeeperSettings zk = ZooKeeperSettings.read(settings);
        String workerId = id.orElseGet(() -> defaultId(self.endpoint()));
        if (!validId(workerId)) {
            throw ConfigurationException.invalid(settings.fullKey(ID), workerId,
                    "a worker id of letters, digits and - _ . : @ [ ] only");
        }
        return new ZooKeeperRegistration(zk, self, workerId);
    }

    /** {@code 10.0.0.5_7001}, {@code worker-1.example.com_7001}, {@code ::1_7001}. */
    static String defaultId(WorkerEndpoint endpoint) {
        return endpoint.host() + "_" + endpoint.port();
    }

    static boolean validId(String id) {
        return !id.isEmpty() && id.length() <= 256 && !id.equals(".") && !id.equals("..")
                && id.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "-_.:@[]".indexOf(c) >= 0);
    }
}
