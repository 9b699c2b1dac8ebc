package dev.rollcall.worker;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.internal.ProviderLookup;
import dev.rollcall.api.internal.UnknownKeys;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's registration with the discovery backend named by {@code rollcall.discovery.type}
 * ({@code rollcall.worker.register=true}): the provider is found before the server starts (a
 * missing one fails {@link RollcallWorker.Builder#start()} before a port is taken), the entry is
 * made and started once the server is bound, and closed by {@link #leave}. Thread-safe.
 */
final class WorkerRegistrar {

    private static final Logger log = LoggerFactory.getLogger(WorkerRegistrar.class);

    private final RollcallConfig config;
    private final String type; // null: not registering
    private final WorkerRegistrationProvider provider;
    private final AtomicReference<WorkerRegistration> entry = new AtomicReference<>();

    private WorkerRegistrar(RollcallConfig config, String type, WorkerRegistrationProvider provider) {
        this.config = config;
        this.type = type;
        this.provider = provider;
    }

    /**
     * The registrar of {@code settings}; one that registers nothing when registration is off.
     *
     * @throws ConfigurationException when no backend is named or none provides it, or when the
     *         advertised host is a wildcard
     */
    static WorkerRegistrar find(WorkerOptions.Resolved settings, ClassLoader classLoader) {
        RollcallConfig cfg = settings.config();
        if (!settings.registering()) {
            return new WorkerRegistrar(cfg, null, null);
        }
        ClassLoader loader = classLoader != null ? classLoader : Thread.currentThread().getContextClassLoader();
        String type = cfg.settings().raw("rollcall.discovery.type").orElseThrow(() ->
                ConfigurationException.missing("rollcall.discovery.type",
                        "the discovery backend to register with (rollcall.worker.register=true); found: "
                                + ProviderLookup.all(WorkerRegistrationProvider.class,
                                WorkerRegistrationProvider::type, loader).keySet()));
        WorkerRegistrationProvider provider = ProviderLookup.find(WorkerRegistrationProvider.class,
                WorkerRegistrationProvider::type, "rollcall.discovery.type", type, "worker registration", loader,
                log::warn);
        if (isWildcard(settings.advertised())) {
            throw ConfigurationException.invalid("rollcall.worker.advertise-host", settings.advertised(),
                    "the address coordinators reach this worker at; a wildcard cannot be registered");
        }
        return new WorkerRegistrar(cfg, type, provider);
    }

    /**
     * Checks the keys of the worker (and of the backend it registers with), then registers
     * {@code worker} and returns once the backend acknowledged it. The entry is kept before it
     * starts, so that a {@link #leave} after a failed start closes it.
     */
    void register(RollcallWorker worker) {
        WorkerRegistration made = null;
        if (provider != null) {
            made = Objects.requireNonNull(provider.create(worker.info(),
                    config.settings().scope("rollcall.discovery." + type + ".")), () -> "a null registration from " + type);
        }
        UnknownKeys.checkWorker(config, type);
        if (made != null) {
            entry.set(made);
            made.start();
            log.info("worker {} registered: {}", worker.endpoint().url(), made.description());
        }
    }

    /** The entry kept in discovery, until {@link #leave}. */
    Optional<WorkerRegistration> entry() {
        return Optional.ofNullable(entry.get());
    }

    /** Leaves discovery (once); a failure is logged, not thrown: the worker stops anyway. */
    void leave(String worker) {
        WorkerRegistration left = entry.getAndSet(null);
        if (left != null) {
            try {
                left.close();
            } catch (RuntimeException e) {
                log.warn("worker {}: leaving discovery failed: {}", worker, e.toString());
            }
        }
    }

    private static boolean isWildcard(String host) {
        String h = host.replace("[", "").replace("]", "");
        return h.equals("0.0.0.0") || h.equals("::") || h.equals("0:0:0:0:0:0:0:0");
    }
}
