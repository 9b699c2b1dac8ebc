package dev.rollcall.api.registration;

/**
 * A worker's entry in a discovery backend: created from settings, {@link #start() started} once
 * the worker serves, {@link #close() closed} before it stops. Thread-safe.
 */
public interface WorkerRegistration extends AutoCloseable {

    /**
     * Makes the worker discoverable and keeps it so until {@link #close()}. Blocks until the backend
     * has acknowledged the entry, within the backend's configured timeout. Losses after that (a
     * lease or check that expired while the backend was unreachable) are repaired in the
     * background, with backoff, and logged. Called once.
     *
     * @throws RegistrationException when the backend did not acknowledge in time; nothing is left
     *                               running (no thread, no connection)
     */
    void start();

    /** What is registered where, e.g. {@code etcd key /rollcall/workers/w-1 (lease 10 s)}; no secrets. */
    String description();

    /**
     * Removes the entry at once (a clean shutdown: coordinators see the worker leave without waiting
     * for a TTL), stops keeping it alive, and releases the backend's connections. Bounded by the
     * backend's timeout; a failure to remove is logged, not thrown, since the TTL removes it later.
     * Idempotent.
     */
    @Override
    void close();
}
