package dev.rollcall.core.protocols;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Discovery that hands the test its listener: the test says which candidates there are, with which labels. */
final class HandedDiscovery implements WorkerDiscovery {
    private final CompletableFuture<CandidateListener> listener = new CompletableFuture<>();

    @Override
    public void start(CandidateListener l) {
        listener.complete(l);
    }

    @Override
    public void close() {
    }

    void offer(WorkerEndpoint... candidates) throws Exception {
        listener.get(5, TimeUnit.SECONDS).onCandidates(Set.of(candidates));
    }
}
