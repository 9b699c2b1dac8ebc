package dev.rollcall.testkit;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * A discovery backend driven by the test: what it {@link #push pushes} is what the resolver sees.
 * Hand it to {@code WorkerResolver.builder().discovery(...)}.
 *
 * <p>Each push is delivered on the caller's thread. A push or failure before the resolver has
 * started it is kept and delivered at {@link #start}, as a real backend publishes the first set as
 * soon as it knows it; after {@link #close()} nothing is delivered any more (a real backend's
 * promise too). Thread-safe: calls are delivered one at a time, in the order they were made.
 */
public final class PushDiscovery implements WorkerDiscovery {

    private final String description;
    private CandidateListener listener;         // guarded by this
    private Set<WorkerEndpoint> latest;          // guarded by this; null until the first push
    private Throwable pendingFailure;            // guarded by this; reported at start
    private boolean closed;                      // guarded by this

    /** A push discovery described as {@code push}. */
    public PushDiscovery() {
        this("push");
    }

    /** A push discovery with its own {@link #description()} (for logs and status output). */
    public PushDiscovery(String description) {
        this.description = description;
    }

    @Override
    public synchronized void start(CandidateListener candidateListener) {
        if (closed) {
            return;
        }
        listener = candidateListener;
        if (latest != null) {
            listener.onCandidates(latest);
        }
        if (pendingFailure != null) {
            listener.onError(pendingFailure);
            pendingFailure = null;
        }
    }

    /**
     * Delivers {@code candidates} as the latest full set (kept until start when not started yet). An
     * unmodifiable set from {@link Set#of} or {@link Set#copyOf} is handed over as it is, anything
     * else copied once.
     */
    public synchronized void push(Collection<WorkerEndpoint> candidates) {
        latest = Set.copyOf(candidates);
        pendingFailure = null;
        if (listener != null && !closed) {
            listener.onCandidates(latest);
        }
    }

    /** Reports {@code cause} as a transient failure of the source (kept until start when not started yet). */
    public synchronized void fail(Throwable cause) {
        if (listener != null && !closed) {
            listener.onError(cause);
        } else {
            pendingFailure = cause;
        }
    }

    /** The last set pushed, empty before the first push. */
    public synchronized Set<WorkerEndpoint> latest() {
        return latest == null ? Set.of() : latest;
    }

    /** The URLs of the last set pushed (a new list on each call), empty before the first push. */
    public List<String> urls() {
        return latest().stream().map(WorkerEndpoint::url).toList();
    }

    /** Whether {@link #start} was called (and the discovery was not closed before). */
    public synchronized boolean isStarted() {
        return listener != null;
    }

    /** Whether {@link #close()} was called. */
    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    @Override
    public String description() {
        return description;
    }
}
