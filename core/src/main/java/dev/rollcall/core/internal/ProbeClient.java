package dev.rollcall.core.internal;

import com.google.common.net.InetAddresses;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.internal.WireFormat;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Opens probe channels and sends {@code WorkerInfo} calls. Internal: not part of Rollcall's public
 * API.
 *
 * <p>All channels share one small event loop group and run callbacks directly on it (no executor
 * hop, no per-channel threads); IP literals skip name resolution. Thread-safe.
 */
public final class ProbeClient implements AutoCloseable {

    /** Idle timeouts above 30 days switch gRPC's idle mode off: a kept channel must not go idle on its own. */
    private static final long NO_IDLE_TIMEOUT_DAYS = 31;

    private final EventLoopGroup eventLoop;
    /** Builds channels and starts calls ({@link #starter()}); null on the shared event loop. */
    private final ExecutorService starts;
    private final int maxResponseBytes;
    private final ProbeTls tls;
    /** Sent as {@code holder_id} on every {@code WatchWorkerInfo} request (exact drain); "" for none. */
    private final String holderId;

    /** A client with its own event loop threads, named {@code threadName-N}; close it to stop them. */
    public ProbeClient(String threadName, int maxResponseBytes) {
        this(threadName, maxResponseBytes, ProbeTls.DEFAULT);
    }

    /** As {@link #ProbeClient(String, int)}, speaking TLS to {@code grpcs://} workers as {@code tls} says. */
    public ProbeClient(String threadName, int maxResponseBytes, ProbeTls tls) {
        this(threadName, maxResponseBytes, tls, "");
    }

    /**
     * As {@link #ProbeClient(String, int, ProbeTls)}, watching every worker as holder {@code holderId}
     * (exact drain: the worker then waits for this client's {@code ReleaseWorker}); "" watches as before.
     */
    public ProbeClient(String threadName, int maxResponseBytes, ProbeTls tls, String holderId) {
        int threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
        this.eventLoop = new MultiThreadIoEventLoopGroup(threads,
                new DefaultThreadFactory(threadName, true), NioIoHandler.newFactory());
        this.starts = Executors.newSingleThreadExecutor(
                new DefaultThreadFactory(threadName + "-start", true));
        this.maxResponseBytes = maxResponseBytes;
        this.tls = Objects.requireNonNull(tls, "tls");
        this.holderId = Objects.requireNonNull(holderId, "holderId");
    }

    private ProbeClient(int maxResponseBytes, ProbeTls tls) {
        this.eventLoop = null;
        this.starts = null;
        this.maxResponseBytes = maxResponseBytes;
        this.tls = Objects.requireNonNull(tls, "tls");
        this.holderId = "";
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
     * Not the event loop: converging on 10,000 workers, event loop threads that also built channels
     * (tens of microseconds each) answered their connections' handshakes late, the workers at the
     * other end woke for one event at a time, and both sides spent a third more CPU per probe (as
     * plain grpc-java does it: one thread builds and starts, the event loop only does I/O).
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
        NettyChannelBuilder builder;
        if (endpoint.tls()) {
            builder = InetAddresses.isInetAddress(endpoint.host())
                    ? NettyChannelBuilder.forAddress(new InetSocketAddress(
                            InetAddresses.forString(endpoint.host()), endpoint.port()), tls.credentials())
                    : NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port(), tls.credentials());
        } else {
            builder = InetAddresses.isInetAddress(endpoint.host())
                    ? NettyChannelBuilder.forAddress(
                            new InetSocketAddress(InetAddresses.forString(endpoint.host()), endpoint.port()))
                    : NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port());
            builder.usePlaintext();
        }
        if (eventLoop != null) {
            EventLoop own = ours(lane);
            builder.eventLoopGroup(own != null ? own : eventLoop).channelType(NioSocketChannel.class, InetSocketAddress.class);
        }
        // Census stats and tracing are on by default: every build then looks io.grpc.census up with
        // Class.forName and, without grpc-census on the class path, pays for two
        // ClassNotFoundExceptions (a scan of every jar): about 10 µs per channel, a tenth of the
        // resolver thread's time while converging. RollcallMetrics measures probes instead.
        InternalNettyChannelBuilder.setStatsEnabled(builder, false);
        InternalNettyChannelBuilder.setTracingEnabled(builder, false);
        // No message bound of the channel's own: the probe and watch calls bound their answers per
        // call (maxResponseBytes), and the channel is also the user's (WorkerResolver.channel) for
        // Arrow Flight, whose own client takes messages of any size (FlightClient: Integer.MAX_VALUE).
        builder.directExecutor()
                .idleTimeout(NO_IDLE_TIMEOUT_DAYS, TimeUnit.DAYS)
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .maxInboundMetadataSize(64 * 1024)
                .disableRetry()
                .userAgent("rollcall");
        if (endpoint.tls() && tls.authority() != null) {
            builder.overrideAuthority(tls.authority());
        }
        if (keepalive != null) {
            // Without calls too: a worker that serves only the unary call has no stream to hear from.
            builder.keepAliveTime(keepalive.time().toNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveTimeout(keepalive.timeout().toNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveWithoutCalls(true);
        }
        return builder.build();
    }

    /**
     * Sends one {@code WorkerInfo} call with a deadline. The future completes on a network thread,
     * never exceptionally: with the worker's answer, or with the failure as a value whose reason is
     * {@link ProbeFailures#describe}'s.
     */
    public CompletableFuture<ProbeOutcome> probe(ManagedChannel channel, WorkerEndpoint endpoint, Duration timeout) {
        CompletableFuture<ProbeOutcome> result = new CompletableFuture<>();
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call;
        try {
            call = channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(), CallOptions.DEFAULT
                    .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .withMaxInboundMessageSize(maxResponseBytes));
        } catch (RuntimeException shutDown) {
            result.complete(ProbeFailures.failed(shutDown, timeout));
            return result;
        }
        ClientCalls.asyncUnaryCall(call, WorkerInfoRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(WorkerInfoResponse response) {
                String problem = AnswerCheck.problem(response);
                result.complete(problem != null
                        ? new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer: " + problem)
                        : answered(endpoint, response));
            }

            @Override
            public void onError(Throwable t) {
                result.complete(ProbeFailures.failed(t, timeout));
            }

            @Override
            public void onCompleted() {
                if (!result.isDone()) {
                    result.complete(new ProbeOutcome.Failed(Status.Code.INTERNAL,
                            "INTERNAL: WorkerInfo completed without a response"));
                }
            }
        });
        return result;
    }

    private static ProbeOutcome.Answered answered(WorkerEndpoint endpoint, WorkerInfoResponse response) {
        return new ProbeOutcome.Answered(WireFormat.toWorkerInfo(endpoint, response),
                WireFormat.fromWire(response.getState()), response.getRevision());
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
     * and must be fast: at 10,000 workers that repeat their answer every few seconds, heartbeats
     * alone are thousands of calls a second.
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
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call;
        try {
            call = channel.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(),
                    CallOptions.DEFAULT.withMaxInboundMessageSize(maxResponseBytes));
        } catch (RuntimeException shutDown) {
            listener.ended(Status.fromThrowable(shutDown));
            return () -> { };
        }
        WorkerInfoRequest.Builder asked = WorkerInfoRequest.newBuilder()
                .setHeartbeatMillis((int) Math.min(Integer.MAX_VALUE, heartbeat.toMillis()));
        if (!holderId.isEmpty()) {
            asked.setHolderId(holderId); // unset otherwise: the request of a coordinator before exact drain
        }
        WorkerInfoRequest request = asked.build();
        final class Observer implements StreamObserver<WorkerInfoResponse>, Watch {
            /** The last answer taken; only the call's callbacks touch it, one at a time. */
            private WorkerInfoResponse last;
            private volatile long heartbeatMillis;

            @Override
            public void onNext(WorkerInfoResponse response) {
                heartbeatMillis = Integer.toUnsignedLong(response.getHeartbeatMillis());
                if (last != null && repeats(response, last)) {
                    listener.repeated();
                    return;
                }
                last = response;
                String problem = AnswerCheck.problem(response);
                if (problem != null) {
                    listener.answer(new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer: " + problem));
                    call.cancel("malformed answer", null);
                    return;
                }
                listener.answer(answered(endpoint, response));
            }

            @Override
            public void onError(Throwable t) {
                listener.ended(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                listener.ended(Status.UNAVAILABLE.withDescription("the worker ended its WatchWorkerInfo stream"));
            }

            @Override
            public void cancel() {
                call.cancel("no longer watched", null);
            }

            @Override
            public long heartbeatMillis() {
                return heartbeatMillis;
            }
        }
        Observer observer = new Observer();
        ClientCalls.asyncServerStreamingCall(call, request, observer);
        return observer;
    }

    /**
     * Whether {@code answer} says what {@code last} said: a worker stamps each distinct answer of
     * its process with a new revision, so one instance's same revision is the same answer (and a
     * comparison of two numbers, not of two messages); without revisions, the same message.
     */
    private static boolean repeats(WorkerInfoResponse answer, WorkerInfoResponse last) {
        if (answer.getRevision() != 0 || last.getRevision() != 0) {
            return answer.getRevision() == last.getRevision() && answer.getInstanceId().equals(last.getInstanceId());
        }
        return answer.equals(last);
    }

    /** A probe that stays open as the worker's stream: its first answer, and the handle that ends it. */
    public record Watched(CompletableFuture<ProbeOutcome> first, Watch stream) {
    }

    /**
     * Probes by opening the worker's {@code WatchWorkerInfo} stream: one call that answers as a
     * probe does and then stays open, instead of a probe and then a stream (two calls per worker,
     * which converging on 10,000 workers pays for on both sides). {@code first} completes with the
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
        CompletableFuture<ProbeOutcome> first = new CompletableFuture<>();
        // 0: waiting for the first answer; 1: answered, the stream is live; 2: over before an answer.
        AtomicInteger phase = new AtomicInteger();
        AtomicReference<Runnable> onTimeout = new AtomicReference<>();
        EventLoop own = ours(lane);
        EventLoop timer = own != null ? own : eventLoop.next();
        ScheduledFuture<?> deadline = timer.schedule(() -> {
            if (phase.compareAndSet(0, 2)) {
                first.complete(new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED,
                        "DEADLINE_EXCEEDED: no answer within " + timeout.toMillis() + " ms"));
                Runnable cancel = onTimeout.get();
                if (cancel != null) {
                    cancel.run();
                }
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        Watch stream = watch(channel, endpoint, heartbeat, new StreamListener() {
            @Override
            public void answer(ProbeOutcome answer) {
                if (phase.compareAndSet(0, 1)) {
                    deadline.cancel(false);
                    first.complete(answer);
                } else if (phase.get() == 1) {
                    listener.answer(answer);
                }
            }

            @Override
            public void repeated() {
                if (phase.get() == 1) {
                    listener.repeated();
                }
            }

            @Override
            public void ended(Status status) {
                if (phase.compareAndSet(0, 2)) {
                    deadline.cancel(false);
                    first.complete(ProbeFailures.failed(status.asRuntimeException(), timeout));
                } else if (phase.get() == 1) {
                    listener.ended(status);
                }
            }
        });
        onTimeout.set(stream::cancel);
        if (phase.get() == 2) {
            stream.cancel(); // timed out before the call was even started
        }
        return new Watched(first, stream);
    }

    /** How long {@link #whenTerminated} waits for a shut-down channel at most. */
    private static final long TERMINATION_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * Completes {@code gone} once {@code channel}, already shut down, has terminated (its sockets
     * closed), looking every millisecond on this client's event loop, and after two seconds at the
     * latest; at once without an event loop of its own. gRPC has no callback for termination.
     */
    public void whenTerminated(ManagedChannel channel, CompletableFuture<Void> gone) {
        if (eventLoop == null || channel.isTerminated()) {
            gone.complete(null);
            return;
        }
        long giveUp = System.nanoTime() + TERMINATION_WAIT_NANOS;
        EventLoop loop = eventLoop.next();
        Runnable[] check = new Runnable[1];
        check[0] = () -> {
            if (channel.isTerminated() || System.nanoTime() - giveUp > 0) {
                gone.complete(null);
            } else {
                loop.schedule(check[0], 1, TimeUnit.MILLISECONDS);
            }
        };
        try {
            loop.schedule(check[0], 1, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            gone.complete(null);
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
