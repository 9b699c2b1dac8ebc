package dev.rollcall.it;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A discovery backend driven by the test: what it pushes is what the resolver sees. Public for the fault suite. */
public final class PushDiscovery implements WorkerDiscovery {

    private final CountDownLatch started = new CountDownLatch(1);
    private volatile CandidateListener listener;
    private volatile boolean closed;

    @Override
    public void start(CandidateListener l) {
        this.listener = l;
        started.countDown();
    }

    public void push(Collection<WorkerEndpoint> candidates) {
        awaitStart();
        listener.onCandidates(Set.copyOf(candidates));
    }

    public void fail(Throwable cause) {
        awaitStart();
        listener.onError(cause);
    }

    private void awaitStart() {
        try {
            if (!started.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the resolver never started this discovery");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String description() {
        return "push";
    }
}
