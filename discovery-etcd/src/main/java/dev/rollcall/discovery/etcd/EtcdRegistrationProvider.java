package dev.rollcall.discovery.etcd;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Registers workers in etcd ({@code rollcall.discovery.type=etcd} with
 * {@code rollcall.worker.register=true}): see the module README for what that promises.
 *
 * <p>It reads the connection keys that {@link EtcdWorkerDiscoveryProvider} reads (endpoints, prefix,
 * timeouts, backoff, TLS, user and password) and two of its own:
 * <ul>
 *   <li>{@code registration.ttl}: the lease's time to live (default and bound: {@link EtcdKeys}),
 *       rounded up to whole seconds (etcd's unit). A worker that dies leaves discovery within it.
 *   <li>{@code registration.id}: the worker's id, the last part of its key {@code <prefix><id>};
 *       default {@code <host>_<port>} of the advertised endpoint (e.g. {@code 10.0.0.5_7001}), so
 *       that a worker restarted on the same address takes its key over. Letters, digits and
 *       {@code - _ . : @ [ ]} only.
 * </ul>
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key (throwing {@link ConfigurationException} naming a bad one) and does not contact
 * etcd; the registration's {@code start()} does, and blocks until etcd has acknowledged the entry.
 */
public final class EtcdRegistrationProvider implements WorkerRegistrationProvider {

    static final String TTL = EtcdKeys.relative(EtcdKeys.REGISTRATION_TTL);
    static final String ID = EtcdKeys.relative(EtcdKeys.REGISTRATION_ID);

    /** Needed by {@link java.util.ServiceLoader}. */
    public EtcdRegistrationProvider() {
    }

    @Override
    public String type() {
        return EtcdWorkerDiscoveryProvider.TYPE;
    }

    @Override
    public WorkerRegistration create(WorkerInfo self, Settings settings) {
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(settings, "settings");
        Duration ttl = ttl(settings);
        Optional<String> id = settings.find(EtcdKeys.REGISTRATION_ID);
        EtcdSettings etcd = EtcdSettings.read(settings);
        String workerId = id.orElseGet(() -> defaultId(self.endpoint()));
        if (!validId(workerId)) {
            throw ConfigurationException.invalid(settings.fullKey(ID), workerId,
                    "a worker id of letters, digits and - _ . : @ [ ] only");
        }
        return new EtcdRegistration(etcd, self, etcd.prefix() + workerId, ttl);
    }

    /** The catalog's check, with the reason for its bound, which a user who set 1s will ask. */
    private static Duration ttl(Settings settings) {
        try {
            return settings.get(EtcdKeys.REGISTRATION_TTL);
        } catch (ConfigurationException e) {
            throw ConfigurationException.invalid(settings.fullKey(TTL), settings.raw(TTL).orElse(""),
                    EtcdKeys.REGISTRATION_TTL.expected() + " (keep-alives go out every third of it)");
        }
    }

    /** {@code 10.0.0.5_7001}, {@code worker-1.example.com_7001}, {@code ::1_7001}. */
    static String defaultId(WorkerEndpoint endpoint) {
        return endpoint.host() + "_" + endpoint.port();
    }

    static boolean validId(String id) {
        return !id.isEmpty() && id.length() <= 256 && id.chars().allMatch(c -> (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-_.:@[]".indexOf(c) >= 0);
    }
}
