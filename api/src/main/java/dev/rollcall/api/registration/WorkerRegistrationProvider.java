package dev.rollcall.api.registration;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;

/**
 * Registers workers with one discovery backend, the same {@link #type()} as the
 * {@link dev.rollcall.api.discovery.WorkerDiscoveryProvider} that watches them, so one
 * configuration file serves both sides. Found by {@link java.util.ServiceLoader}: list the
 * implementation in {@code META-INF/services/dev.rollcall.api.registration.WorkerRegistrationProvider}.
 * Needs a public no-argument constructor.
 *
 * <p>Settings are scoped to {@code rollcall.discovery.<type>.}, the scope the discovery reads: the
 * connection keys (endpoints, TLS, credentials, prefix or service name) are shared, and keys that
 * only registration reads live under {@code registration.} there, e.g.
 * {@code rollcall.discovery.etcd.registration.ttl}. The coordinator's key check leaves that
 * sub-scope to the worker side, whose check reports a typo in it.
 */
public interface WorkerRegistrationProvider {

    /** The backend's name, equal to the discovery type: {@code etcd}, {@code consul}. */
    String type();

    /**
     * Creates the registration of {@code self} from the backend's settings: reads every key it
     * supports here and validates them all, and does no I/O (that is {@link WorkerRegistration#start()}),
     * so that a bad key fails a worker before it serves anything.
     *
     * @param self     the worker as coordinators will see it: its advertised endpoint, version,
     *                 instance id and labels
     * @param settings scoped to {@code rollcall.discovery.<type>.}
     * @throws dev.rollcall.api.ConfigurationException naming a bad key and value
     */
    WorkerRegistration create(WorkerInfo self, Settings settings);
}
