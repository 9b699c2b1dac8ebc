package dev.rollcall.cli;

import com.google.common.util.concurrent.ListenableFuture;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How many coordinators still hold each draining worker of a snapshot (exact drain,
 * {@code WorkerInfoResponse.holders}, W21 of docs/protocol.md), for {@code rollcall workers}. A
 * snapshot does not carry the count, so this asks each {@code DRAINING} worker {@code WorkerInfo}
 * once, over the resolver's kept connection (its TLS), all at once, each call with {@code timeout}
 * and answers bounded to 1 MiB as a probe's. A worker that fails, times out, answers as another
 * instance or no longer drains gets no count; a worker from before exact drain says 0. At most
 * {@value #MAX_ASKED} workers are asked per snapshot, the rest get no count. Blocks the calling
 * thread for at most about {@code timeout}; stateless.
 */
final class DrainHolders {

    /** The most draining workers asked per snapshot: a fleet in a rolling restart drains a few at a time. */
    static final int MAX_ASKED = 256;
    private static final int MAX_ANSWER_BYTES = 1 << 20;

    private DrainHolders() {
    }

    /** By endpoint URL: the holders each draining worker that answered says; absent for every other worker. */
    static Map<String, Integer> ask(WorkerResolver resolver, FleetSnapshot snapshot, Duration timeout)
            throws InterruptedException {
        record Asked(WorkerStatus status, ListenableFuture<WorkerInfoResponse> answer) {
        }
        List<Asked> asked = new ArrayList<>();
        for (WorkerStatus s : snapshot.statuses()) {
            if (s.state() != State.DRAINING || asked.size() >= MAX_ASKED) {
                continue;
            }
            try {
                asked.add(new Asked(s, WorkerServiceGrpc.newFutureStub(resolver.channel(s.endpoint()))
                        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                        .withMaxInboundMessageSize(MAX_ANSWER_BYTES)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance())));
            } catch (IllegalArgumentException | IllegalStateException gone) {
                // No longer a candidate, or the resolver closed: no count.
            }
        }
        if (asked.isEmpty()) {
            return Map.of();
        }
        Map<String, Integer> holders = new HashMap<>();
        long until = System.nanoTime() + timeout.toNanos() + TimeUnit.SECONDS.toNanos(1); // the deadline, delivered
        for (Asked a : asked) {
            try {
                WorkerInfoResponse r = a.answer().get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                String instance = a.status().info().map(i -> i.instanceId()).orElse("");
                if (r.getState() == ServingState.DRAINING && r.getInstanceId().equals(instance)) {
                    holders.put(a.status().endpoint().url(), r.getHolders());
                }
            } catch (ExecutionException | TimeoutException failed) {
                a.answer().cancel(true);
            }
        }
        return Collections.unmodifiableMap(holders);
    }

    /** {@code " (2 holders)"}, {@code " (1 holder)"}; {@code ""} for none or no count. */
    static String suffix(Integer holders) {
        if (holders == null || holders == 0) {
            return "";
        }
        return " (" + Integer.toUnsignedString(holders) + (holders == 1 ? " holder)" : " holders)");
    }
}
