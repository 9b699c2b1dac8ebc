package dev.rollcall.core.internal.probe.client;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.core.internal.drain.HolderIds;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Opens probe channels and sends {@code WorkerInfo} calls. Internal: not part of Rollcall's public
 * API.
 *
 * <p>All channels share one small event loop group and run callbacks directly on it (no executor
 * hop, no per-channel threads); IP literals skip name resolution. Thread-safe. This class owns the
 * threads and says what each call promises; {@link ProbeChannels} builds the channels and
 * {@link WorkerInfoCalls} makes the calls.
 */
public final class ProbeClient implements AutoCloseable {

    private final EventLoopGroup eventLoop;
    /** Builds channels and starts calls ({@link #starter()}); null on the shared event loop. */
    private final ExecutorService starts;
    /** Its {@code rollcall.v1} calls: the probe, the watch, the probe that stays open as the watch. */
    private final WorkerInfoCalls calls;
    private final ProbeTls tls;

    /** A client with its own event loop threads, named {@code threadName-N}; close it to stop them. */
    public ProbeClient(String threadName, int maxResponseBytes) {
        this(threadName, maxResponseBytes, ProbeTls.DEFAULT);
    }

    /** As {@link #ProbeClient(String, int)}, speaking TLS to {@code grpcs://} workers as {@code tls} says. */
    public ProbeClient(String threadName, int maxResponseBytes, ProbeTls tls) {
        this(threadName, maxResponseBytes, tls, null);
    }

    /**
     * As {@link #ProbeClient(String, int, ProbeTls)}, watching each worker as the holder
     * {@code holderIds} names for its URL (exact drain: the worker then waits for this client's
     * {@code ReleaseWorker}); null watches as before.
     */
    public ProbeClient(String threadName, int maxResponseBytes, ProbeTls tls, HolderIds holderIds) {
        int threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
        this.eventLoop = new MultiThreadIoEventLoopGroup(threads,
                new DefaultThreadFactory(threadName, true), NioIoHandler.newFactory());
        this.starts = Executors.newSingleThreadExecutor(
                new DefaultThreadFactory(threadName + "-start", true));
        this.tls = Objects.requireNonNull(tls, "tls");
        this.calls = new WorkerInfoCalls(maxResponseBytes, holderIds);
    }

    private ProbeClient(int maxResponseBytes, ProbeTls tls) {
        this.eventLoop = null;
        this.starts = null;
        this.tls = Objects.requireNonNull(tls, "tls");
        this.calls = new WorkerInfoCalls(maxResponseBytes, null);
    }

    /**
     * A client on gRPC's shared, reference-counted event loop, for one-off probes: nothing to
     * close beyond the channels.
     */
    public static ProbeClient onSharedEventLoop(int maxResponseBytes) {
        return new ProbeClient(maxResponseBytes, ProbeTls.DEFAULT);
    }

    /** As {@link #onSharedEventLoop(int)}, speaking TLS to {@code grpcs://} workers as {@code tls} says. */
    public static ProbeClient onSharedEventLoop(int maxResponseBytes, ProbeTls tls) {
        return new ProbeClient(maxResponseBytes, tls);
    }

    /**
     * Where work that builds channels and starts calls runs off the caller's thread: a thread of
     * this client's own ({@code threadName-start}), or the caller itself on the shared event loop.
     * Not the event loop: event loop threads that also build channels answer their connections'
     * handshakes late, so the workers at the other end wake for one event at a time and both sides
     * spend more CPU per probe (as plain grpc-java does it: one thread builds and starts, the event
     * loop only does I/O).
     */
    public Executor starter() {
        ExecutorService s = starts;
        return s == null ? Runnable::run : s;
    }

    /**
     * One of this client's event loop threads (round robin), or the caller itself on the shared
     * event loop: a channel opened with {@link #open(WorkerEndpoint, Executor)}
     * on a lane does its network I/O there, and {@link #watchFirst}'s deadline for it is kept there,
     * so that the answer and its deadline take no hop between event loops.
     */
    public Executor lane() {
        EventLoopGroup loop = eventLoop;
        return loop == null ? Runnable::run : loop.next();
    }

    /**
     * A channel to {@code endpoint}; it connects lazily, on the first call. {@code grpcs://}
     * endpoints get TLS with this client's {@link ProbeTls}, {@code grpc://} ones plaintext.
     */
    public ManagedChannel open(WorkerEndpoint endpoint) {
        return open(endpoint, null);
    }

    /**
     * As {@link #open(WorkerEndpoint)}, doing its network I/O on {@code lane} (from {@link #lane()}),
     * or on any of this client's event loop threads when {@code lane} is null or not one of them.
     */
    public ManagedChannel open(WorkerEndpoint endpoint, Executor lane) {
        return open(endpoint, lane, null);
    }

    /**
     * HTTP/2 keepalive for a channel that is kept: a ping after {@code time} without a frame from
     * the worker, with calls in flight or none, and the connection dropped when the ping is not
     * answered within {@code timeout}. grpc-java pings no more often than every 10 s whatever
     * {@code time} says, and a server that does not permit pings that often (its
     * {@code permitKeepAliveTime}, 5 min by default) answers with a {@code too_many_pings} GOAWAY.
     */
    public record Http2Keepalive(Duration time, Duration timeout) {
        public Http2Keepalive {
            Objects.requireNonNull(time, "time");
            Objects.requireNonNull(timeout, "timeout");
        }
    }

    /** As {@link #open(WorkerEndpoint, Executor)}, with {@code keepalive} (null: none). */
    public ManagedChannel open(WorkerEndpoint endpoint, Executor lane, Http2Keepalive keepalive) {
        return open(endpoint, lane, keepalive, null);
    }

    /**
     * As {@link #open(WorkerEndpoint, Executor, Http2Keepalive)}, counting the channel's sockets in
     * {@code sockets} (null: not counted) for {@link #whenClosed}.
     */
    public ManagedChannel open(WorkerEndpoint endpoint, Executor lane, Http2Keepalive keepalive, OpenSockets sockets) {
        EventLoop own = eventLoop == null ? null : ours(lane);
        EventLoopGroup loop = own != null ? own : eventLoop; // null: gRPC's shared event loop
        return ProbeChannels.build(endpoint, tls, loop, keepalive, loop == null ? null : sockets);
    }

    /**
     * Sends one {@code WorkerInfo} call with a deadline. The future completes on a network thread,
     * never exceptionally: with the worker's answer, or with the failure as a value whose reason is
     * {@link ProbeFailures#describe}'s.
     */
    public CompletableFuture<ProbeOutcome> probe(ManagedChannel channel, WorkerEndpoint endpoint, Duration timeout) {
        return calls.probe(channel, endpoint, timeout);
    }

    /** {@code lane} as one of this client's event loops; null when it is not one. */
    private EventLoop ours(Executor lane) {
        return lane instanceof EventLoop loop && loop.parent() == eventLoop ? loop : null;
    }

    /** A stream of a worker's answers over {@code channel}; {@link #cancel()} ends it. */
    public interface Watch {
        void cancel();

        /**
         * How often the worker repeats its answer on this stream when nothing changes, in
         * milliseconds, as its latest answer says ({@code heartbeat_millis}); 0 when it does not (a
         * worker from before heartbeats: its silence is not its absence) or has not answered yet.
         * Any thread.
         */
        default long heartbeatMillis() {
            return 0;
        }
    }

    /**
     * What a {@code WatchWorkerInfo} stream tells its watcher. Every method runs on a network thread
     * and must be fast: every worker of a large fleet repeats its answer every few seconds, so
     * heartbeats alone arrive many times a second.
     */
    public interface StreamListener {
        /**
         * An answer unlike the one before it on this stream (the first one included), or a
         * {@code Failed} outcome for an answer that breaks the protocol's bounds, after which the
         * stream is cancelled.
         */
        void answer(ProbeOutcome answer);

        /** The stream's last answer again, unchanged (a heartbeat): proof of life, not decoded. */
        default void repeated() {
        }

        /** The status the stream ended with ({@code UNIMPLEMENTED} from a worker that only answers the unary call). */
        void ended(Status status);
    }

    /**
     * Watches a worker ({@code WatchWorkerInfo}), asking it to repeat its answer after
     * {@code heartbeat} without news ({@link Duration#ZERO}: only on change). An answer that repeats
     * the stream's last one (the same revision of the same instance; without revisions, the same
     * message) is only {@link StreamListener#repeated}: a heartbeat costs no decoding and no
     * conversion. No deadline: the stream lasts as long as the worker is watched.
     */
    public Watch watch(ManagedChannel channel, WorkerEndpoint endpoint, Duration heartbeat, StreamListener listener) {
        return calls.watch(channel, endpoint, heartbeat, listener);
    }

    /** A probe that stays open as the worker's stream: its first answer, and the handle that ends it. */
    public record Watched(CompletableFuture<ProbeOutcome> first, Watch stream) {
    }

    /**
     * Probes by opening the worker's {@code WatchWorkerInfo} stream: one call that answers as a
     * probe does and then stays open, instead of a probe and then a stream (two calls per worker,
     * which converging on a large fleet pays for on both sides). {@code first} completes with the
     * first answer, or with the failure when the stream ends first or sends nothing within
     * {@code timeout} ({@code DEADLINE_EXCEEDED}; the stream is cancelled); a worker that serves only
     * the unary call ends it {@code UNIMPLEMENTED}. Only after a first answer do later answers, their
     * repeats and the stream's end go to {@code listener}, as with {@link #watch} (which asks for
     * {@code heartbeat}). Callbacks on network threads; {@code first} never completes exceptionally.
     * Needs this client's own event loop (for the deadline, kept on {@code lane}, the channel's own:
     * see {@link #lane()}; on any of the client's event loops when {@code lane} is not one of them).
     */
    public Watched watchFirst(ManagedChannel channel, Executor lane, WorkerEndpoint endpoint,
                              Duration timeout, Duration heartbeat, StreamListener listener) {
        if (eventLoop == null) {
            throw new IllegalStateException("watchFirst needs a ProbeClient with its own event loop");
        }
        EventLoop own = ours(lane);
        return calls.watchFirst(channel, own != null ? own : eventLoop.next(), endpoint, timeout, heartbeat, listener);
    }

    /** How long {@link #whenClosed} waits for a shut-down channel's sockets at most. */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * Completes {@code gone} once a channel, already shut down, whose sockets {@code sockets}
     * counted ({@link #open(WorkerEndpoint, Executor, Http2Keepalive, OpenSockets)}) has none open,
     * on the thread that closed the last, and after two seconds at the latest; at once without an
     * event loop of this client's own (nothing was counted).
     */
    public void whenClosed(OpenSockets sockets, CompletableFuture<Void> gone) {
        if (eventLoop == null) {
            gone.complete(null);
            return;
        }
        sockets.whenNoneOpen(gone);
        if (!gone.isDone()) {
            try {
                ScheduledFuture<?> bound = eventLoop.next().schedule(() -> gone.complete(null), CLOSE_WAIT_NANOS,
                        TimeUnit.NANOSECONDS);
                gone.whenComplete((v, e) -> bound.cancel(false));
            } catch (RejectedExecutionException stopped) {
                gone.complete(null);
            }
        }
    }

    /** Stops the starter thread and shuts down the event loop, waiting briefly for both. Channels must be shut down first. */
    @Override
    public void close() {
        if (eventLoop == null) {
            return;
        }
        starts.shutdown(); // starts queued still run (a closed link completes them CANCELLED); later ones are rejected
        try {
            starts.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
