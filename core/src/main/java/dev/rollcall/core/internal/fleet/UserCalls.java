package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.probe.ProbeScheduler;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import java.util.concurrent.CompletableFuture;

/**
 * What the user's calls tell the fleet and ask of it: a call that failed as if its worker were gone
 * or that ran out of its deadline ({@link FailedCalls}), the channel a call shares with the probes,
 * and the {@code rollcall:} name resolver's check that a connection reached a verified worker.
 * Works on its {@link FleetTracker}'s workers; an unknown URL, or a closed tracker, is a worker
 * that is not there. Confined to the resolver's serial context, as the tracker.
 */
public final class UserCalls {

    private final FleetTracker tracker;
    private final ProbeScheduler<TrackedWorker> probes;
    private final FailedCalls failedCalls;
    private final FlapDamping damping;

    UserCalls(FleetTracker tracker, ProbeScheduler<TrackedWorker> probes, FailedCalls failedCalls,
              FlapDamping damping) {
        this.tracker = tracker;
        this.probes = probes;
        this.failedCalls = failedCalls;
        this.damping = damping;
    }

    /**
     * Probes the worker at {@code url} with a probe that starts now and completes {@code result}
     * with whether that probe's answer is the instance the last snapshot lists as compatible: what
     * a connection made before now reached is then a verified worker (the gRPC name resolver's
     * gate). Any doubt (unknown URL, failure, another instance, not yet published) is {@code false}.
     */
    public void verify(String url, CompletableFuture<Boolean> result) {
        TrackedWorker t = tracker.find(url);
        if (t == null) {
            result.complete(false);
            return;
        }
        probes.requestFresh(t, outcome -> {
            boolean ok = false;
            if (outcome instanceof ProbeOutcome.Answered a && tracker.tracks(t) && t.inUse()) {
                ok = tracker.lastBuilt().status(url)
                        .filter(st -> st.state() == WorkerStatus.State.COMPATIBLE)
                        .flatMap(WorkerStatus::info)
                        .map(i -> i.instanceId().equals(a.info().instanceId()))
                        .orElse(false);
            }
            result.complete(ok);
        });
    }

    /** A user's call to the worker at {@code url} failed as if it were gone (see {@link FailedCalls#failed}). */
    public void callFailed(String url, String unescaped) {
        String why = PeerText.escape(unescaped); // a failed call's status message is the worker's text
        TrackedWorker t = tracker.find(url);
        if (t != null && t.inUse() && failedCalls.failed(t, why)) {
            damping.observe(t);
            tracker.settle();
        }
    }

    /** A user's call to the worker at {@code url} ran out of its deadline (see {@link FailedCalls#timedOut}). */
    public void callTimedOut(String url, String why) {
        TrackedWorker t = tracker.find(url);
        if (t != null && t.inUse() && failedCalls.timedOut(t, why)) {
            tracker.settle();
        }
    }

    /** The channel of the candidate at {@code url} for the user's calls (see {@link ProbeScheduler#share}); null if none. */
    public ManagedChannel share(String url) {
        TrackedWorker t = tracker.find(url);
        return t == null ? null : probes.share(t);
    }
}
