package dev.rollcall.core.internal.probe;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The liveness of one kept link to a server Rollcall does not own, without HTTP/2 pings: such a
 * server may punish them (grpc-java's default permits one every 5 minutes and answers the third
 * that comes sooner with a {@code too_many_pings} GOAWAY), while a real call is never penalised. So
 * the protocol's own probe goes over the connection every {@code rollcall.probe.keepalive-time},
 * with {@code rollcall.probe.keepalive-timeout} as its deadline, while the connection is READY (a
 * check never dials). One that fails {@code DEADLINE_EXCEEDED} or {@code UNAVAILABLE} drops the
 * connection ({@link ManagedChannel#enterIdle()}): the scheduler sees it leave READY, takes the
 * worker out and probes it again over a new connection, as for any dropped connection. Any other
 * outcome (an answer, {@code NOT_SERVING}, {@code UNIMPLEMENTED}) means the connection carries
 * calls, and is not judged here: the state is the probe's and the push's business.
 *
 * <p>One task per link on the link's event loop, from {@link #start()} (the scheduler watches the
 * link: the worker is kept) until a failed check or {@link #close()}; at most one check in flight.
 * Thread-safe.
 */
final class LivenessCalls {

    private static final Logger log = LoggerFactory.getLogger(LivenessCalls.class);

    private final ScheduledExecutorService timer;
    private final ProtocolTransport.Liveness every;
    private final String protocol;
    private final Supplier<WorkerEndpoint> endpoint;
    private final Supplier<ManagedChannel> channel;
    private final Function<Duration, CompletableFuture<ProbeOutcome>> check;
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private ScheduledFuture<?> task; // guarded by this
    private boolean closed;          // guarded by this

    /**
     * Checks on {@code timer} (the link's event loop) with {@code check} (the link's probe, which
     * starts the protocol's call on the starter thread and never completes exceptionally) over
     * {@code channel} (the link's, null when it has none).
     */
    LivenessCalls(ScheduledExecutorService timer, ProtocolTransport.Liveness every, String protocol, Supplier<WorkerEndpoint> endpoint,
                  Supplier<ManagedChannel> channel, Function<Duration, CompletableFuture<ProbeOutcome>> check) {
        this.timer = timer;
        this.every = every;
        this.protocol = protocol;
        this.endpoint = endpoint;
        this.channel = channel;
        this.check = check;
    }

    /** Checks every {@code keepalive-time} from now on; nothing when checks already run or the link is closed. */
    synchronized void start() {
        if (task != null || closed) {
            return;
        }
        long nanos = every.time().toNanos();
        try {
            task = timer.scheduleWithFixedDelay(this::tick, nanos, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopped) {
            closed = true; // the probe client is closing
        }
    }

    /** No more checks; one in flight is left to finish and ignored. Idempotent. */
    synchronized void close() {
        closed = true;
        stop();
    }

    private void stop() { // guarded by this
        if (task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /** On the event loop: one check over a READY connection, unless one is still out. */
    private void tick() {
        ManagedChannel c = channel.get();
        if (c == null || c.getState(false) != ConnectivityState.READY || !inFlight.compareAndSet(false, true)) {
            return; // not connected (the scheduler deals with that), or the last check still runs
        }
        check.apply(every.timeout()).thenAccept(outcome -> {
            inFlight.set(false);
            if (outcome instanceof ProbeOutcome.Failed f
                    && (f.code() == Status.Code.DEADLINE_EXCEEDED || f.code() == Status.Code.UNAVAILABLE)) {
                dropped(c, f);
            }
        });
    }

    /** The connection carries no calls: dropped, so that the scheduler reconnects and probes again. */
    private void dropped(ManagedChannel c, ProbeOutcome.Failed failed) {
        synchronized (this) {
            if (closed || task == null) {
                return;
            }
            stop(); // started again once a probe over the new connection answers and the link is watched anew
        }
        log.info("worker {}: its {} liveness call over the kept connection failed ({}); dropping the connection",
                endpoint.get().url(), protocol, failed.reason());
        c.enterIdle();
    }
}
