package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The floor the convergence targets are set against, measured in the same run on the same
 * machine: plain grpc-java with everything the limits assume — one shared two-thread event
 * loop, {@code directExecutor()}, resolved addresses, census off, at most 64 probes in flight, a
 * fresh channel per worker kept open (as Rollcall keeps them) — and nothing else: no resolver, no
 * bookkeeping, no snapshots. Not a baseline (nobody writes this loop); it shows how much of a
 * convergence time is the machine's.
 *
 * <p>It makes either call: the unary {@code WorkerInfo} (the floor the targets name), or the call
 * Rollcall's probe makes, {@code WatchWorkerInfo}, counted at its first answer and left open as
 * Rollcall leaves it ({@link Call#STREAM}): the wire work of Rollcall's pushed drain, without
 * Rollcall.
 */
final class PlainGrpcFloor {

    /**
     * {@link ThreadCpu#byGroup()} at the last answer of the last {@link #converge} given an
     * {@code atAnswer}, before its event loop's threads end: the scenario thread reads it right after.
     */
    static volatile java.util.Map<String, Long> groupsAtAnswer = java.util.Map.of();

    /** Which call probes a worker. */
    enum Call {
        /** {@code WorkerInfo}: one answer, and the call is over. */
        UNARY,
        /** {@code WatchWorkerInfo}: answered once at the start and kept open, as Rollcall's probe. */
        STREAM,
        /**
         * {@code WatchWorkerInfo} as Rollcall's probe asks for it with its defaults: heartbeats
         * every 5 s ({@code probe.keepalive-time}) and the channel's HTTP/2 keepalive (5 s, 3 s,
         * without calls; grpc-java pings at most every 10 s): what each kept channel carries
         * while it is idle, so that a fleet held open this way costs what Rollcall's costs.
         */
        STREAM_LIVE,
        /**
         * {@code WorkerInfo} over a channel shut down at its answer: a connection per probe, as
         * Rollcall probes with {@code keepProbeChannels(false)} (or past its kept-channel cap).
         */
        UNARY_CLOSED
    }

    /**
     * Rollcall's default {@code probe.keepalive-time} (also the heartbeat its probe asks for) and
     * {@code probe.keepalive-timeout}, for {@link Call#STREAM_LIVE}: copied, as they are core's internals.
     */
    private static final Duration KEEPALIVE_TIME = Duration.ofSeconds(5);
    private static final Duration KEEPALIVE_TIMEOUT = Duration.ofSeconds(3);

    private PlainGrpcFloor() {
    }

    /** Probes every worker once with the unary call; returns the time until the last answer, in nanoseconds. */
    static long converge(List<WorkerEndpoint> fleet) throws InterruptedException {
        return converge(fleet, Call.UNARY, null, null, null);
    }

    /**
     * As {@link #converge(List)}, with {@code call}; {@code atAnswer}, when given, gets this
     * process's and its children's CPU time (nanoseconds) at the last answer, before the channels
     * are closed, and with {@code kernelBefore} the {@link KernelCounters#since} it after them (six
     * in all); {@code latencies}, when given, each probe's time from its channel's build to its answer.
     */
    static long converge(List<WorkerEndpoint> fleet, Call call, long[] atAnswer, Latencies latencies,
                         KernelCounters.Snapshot kernelBefore) throws InterruptedException {
        return converge(fleet, call, atAnswer, latencies, kernelBefore, null);
    }

    /** As above; {@code answers}, when given, gets each answer's time since the start, in the order they came. */
    static long converge(List<WorkerEndpoint> fleet, Call call, long[] atAnswer, Latencies latencies,
                         KernelCounters.Snapshot kernelBefore, long[] answers) throws InterruptedException {
        return converge(fleet, call, atAnswer, latencies, kernelBefore, answers, null);
    }

    /** What runs once every worker answered, with every channel (and stream) still open. */
    interface WhileOpen {
        void run() throws InterruptedException;
    }

    /** As above; {@code whileOpen}, when given, runs after the last answer, before the channels close. */
    static long converge(List<WorkerEndpoint> fleet, Call call, long[] atAnswer, Latencies latencies,
                         KernelCounters.Snapshot kernelBefore, long[] answers, WhileOpen whileOpen)
            throws InterruptedException {
        java.util.concurrent.atomic.AtomicInteger answeredSoFar = new java.util.concurrent.atomic.AtomicInteger();
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("plain-grpc", true),
                NioIoHandler.newFactory());
        List<ManagedChannel> channels = new ArrayList<>(fleet.size());
        try {
            Semaphore inFlight = new Semaphore(64);
            CountDownLatch answered = new CountDownLatch(fleet.size());
            long start = System.nanoTime();
            for (WorkerEndpoint endpoint : fleet) {
                inFlight.acquire();
                long probeStart = System.nanoTime();
                ManagedChannel channel = channel(endpoint, call, loop);
                channels.add(channel);
                StreamObserver<WorkerInfoResponse> observer = new StreamObserver<>() {
                    private boolean done; // callbacks of one call come one after another

                    @Override
                    public void onNext(WorkerInfoResponse value) {
                        done(); // the stream's first answer is the probe's; the unary call's only one
                    }

                    @Override
                    public void onError(Throwable t) {
                        done();
                    }

                    @Override
                    public void onCompleted() {
                        done();
                    }

                    private void done() {
                        if (done) {
                            return;
                        }
                        done = true;
                        if (latencies != null) {
                            latencies.add(System.nanoTime() - probeStart);
                        }
                        if (answers != null) {
                            answers[answeredSoFar.getAndIncrement()] = System.nanoTime() - start;
                        }
                        if (call == Call.UNARY_CLOSED) {
                            channel.shutdown();
                        }
                        inFlight.release();
                        answered.countDown();
                    }
                };
                if (call == Call.STREAM || call == Call.STREAM_LIVE) {
                    ClientCalls.asyncServerStreamingCall(channel.newCall(WorkerServiceGrpc.getWatchWorkerInfoMethod(),
                            CallOptions.DEFAULT), call == Call.STREAM ? WorkerInfoRequest.getDefaultInstance()
                            : WorkerInfoRequest.newBuilder().setHeartbeatMillis((int) KEEPALIVE_TIME.toMillis()).build(), observer);
                } else {
                    ClientCalls.asyncUnaryCall(channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(),
                                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
                            WorkerInfoRequest.getDefaultInstance(), observer);
                }
            }
            if (!answered.await(2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("plain grpc-java: probes unanswered after 2 minutes");
            }
            long nanos = System.nanoTime() - start;
            if (atAnswer != null) {
                atAnswer[0] = Convergence.processCpu();
                atAnswer[1] = Convergence.childrenCpu();
                groupsAtAnswer = ThreadCpu.byGroup(); // its event loop's threads end with it
                if (kernelBefore != null) {
                    System.arraycopy(KernelCounters.since(kernelBefore), 0, atAnswer, 2, 4);
                }
            }
            if (whileOpen != null) {
                whileOpen.run();
            }
            return nanos;
        } finally {
            closeAll(channels, loop);
        }
    }

    /** {@code endpoint}'s channel on {@code loop}, as the floor builds it for {@code call}. */
    static ManagedChannel channel(WorkerEndpoint endpoint, Call call, EventLoopGroup loop) {
        NettyChannelBuilder builder = NettyChannelBuilder
                .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), endpoint.port()))
                .eventLoopGroup(loop).channelType(NioSocketChannel.class, InetSocketAddress.class)
                .directExecutor().usePlaintext();
        InternalNettyChannelBuilder.setStatsEnabled(builder, false);
        InternalNettyChannelBuilder.setTracingEnabled(builder, false);
        if (call == Call.STREAM_LIVE) {
            builder.keepAliveTime(KEEPALIVE_TIME.toNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveTimeout(KEEPALIVE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS).keepAliveWithoutCalls(true);
        }
        return builder.build();
    }

    /** Shuts {@code channels} down at once, waits for each (5 s at most), then ends {@code loop}. */
    static void closeAll(List<ManagedChannel> channels, EventLoopGroup loop) throws InterruptedException {
        channels.forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel c : channels) {
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
