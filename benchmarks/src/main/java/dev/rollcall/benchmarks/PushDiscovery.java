package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A discovery backend the benchmark drives: {@link #publish} hands the resolver a full set at once,
 * on the caller's thread, and keeps it as the list the baseline's loop reads.
 */
final class PushDiscovery implements WorkerDiscovery {

    private volatile CandidateListener listener;
    private volatile Set<WorkerEndpoint> latest = Set.of();

    @Override
    public void start(CandidateListener listener) {
        this.listener = listener;
    }

    /** Publishes {@code endpoints} as the latest full set. */
    void publish(Collection<WorkerEndpoint> endpoints) {
        Set<WorkerEndpoint> set = new LinkedHashSet<>(endpoints);
        latest = set;
        CandidateListener l = listener;
        if (l != null) {
            l.onCandidates(set);
        }
    }

    /** The latest set, as the list of URLs a hand-written loop reads (a new list on each call). */
    List<String> urls() {
        return latest.stream().map(WorkerEndpoint::url).toList();
    }

    @Override
    public void close() {
        listener = null;
    }

    @Override
    public String description() {
        return "push[benchmark]";
    }
}
