package dev.rollcall.api.discovery;

/**
 * A running discovery backend: it watches some source of truth and pushes the latest full set of
 * candidate endpoints to its listener whenever that set changes.
 *
 * <p>Malformed items from the source (a bad line, a bad payload) are skipped and logged with where
 * they came from; the rest of the set is still published.
 */
public interface WorkerDiscovery extends AutoCloseable {

    /**
     * Starts watching and publishes the first set as soon as it is known. Called once, by the
     * resolver, on the thread that builds the resolver; must not block on the network: do the work
     * on the backend's own (named, daemon) threads.
     */
    void start(CandidateListener listener);

    /** Stops watching and releases every thread and connection. Idempotent; does not throw. */
    @Override
    void close();

    /** A short description for logs and status output, e.g. {@code static[3 endpoints]}. */
    default String description() {
        return getClass().getSimpleName();
    }
}
