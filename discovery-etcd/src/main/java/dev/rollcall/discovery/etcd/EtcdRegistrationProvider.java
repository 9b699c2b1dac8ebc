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
 *   <li>{@code registration.ttl}: the lease's time to live, default {@code 10s}, at least {@code 2s},
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

    static final String TTL = "registration.ttl";
    static final String ID = "registration.id";
    static final Duration DEFAULT_TTL = Duration.ofSeconds(10);
    static final Duration MIN_TTL = Duration.ofSeconds(2);

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
        Duration ttl = settings.positiveDuration(TTL, DEFAULT_TTL);
        Optional<String> id = settings.raw(ID);
        EtcdSettings etcd = EtcdSettings.read(settings);
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw ConfigurationException.invalid(settings.fullKey(TTL), settings.raw(TTL).orElse(ttl.toString()),
                    "a duration of at least 2s (keep-alives go out every third of it)");
        }
        String workerId = id.orElseGet(() -> defaultId(self.endpoint()));
        if (!validId(workerId)) {
            throw ConfigurationException.invalid(settings.fullKey(ID), workerId,
                    "a worker id of letters, digits and - _ . : @ [ ] only");
        }
        return new EtcdRegistration(etcd, self, etcd.prefix() + workerId, ttl);
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
