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
 */
final class PlainGrpcFloor {

    private PlainGrpcFloor() {
    }

    /** Probes every worker once; returns the time until the last answer, in nanoseconds. */
    static long converge(List<WorkerEndpoint> fleet) throws InterruptedException {
        return converge(fleet, null, null);
    }

    /**
     * As {@link #converge(List)}; {@code atAnswer}, when given, gets this process's and its
     * children's CPU time (nanoseconds) at the last answer, before the channels are closed;
     * {@code latencies}, when given, each probe's time from its channel's build to its answer.
     */
    static long converge(List<WorkerEndpoint> fleet, long[] atAnswer, Latencies latencies) throws InterruptedException {
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
                NettyChannelBuilder builder = NettyChannelBuilder
                        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), endpoint.port()))
                        .eventLoopGroup(loop).channelType(NioSocketChannel.class, InetSocketAddress.class)
                        .directExecutor().usePlaintext();
                InternalNettyChannelBuilder.setStatsEnabled(builder, false);
                InternalNettyChannelBuilder.setTracingEnabled(builder, false);
                ManagedChannel channel = builder.build();
                channels.add(channel);
                ClientCalls.asyncUnaryCall(channel.newCall(WorkerServiceGrpc.getWorkerInfoMethod(),
                                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
                        WorkerInfoRequest.getDefaultInstance(), new StreamObserver<WorkerInfoResponse>() {
                            @Override
                            public void onNext(WorkerInfoResponse value) {
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
                                if (latencies != null) {
                                    latencies.add(System.nanoTime() - probeStart);
                                }
                                inFlight.release();
                                answered.countDown();
                            }
                        });
            }
            if (!answered.await(2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("plain grpc-java: probes unanswered after 2 minutes");
            }
            long nanos = System.nanoTime() - start;
            if (atAnswer != null) {
                atAnswer[0] = Convergence.processCpu();
                atAnswer[1] = Convergence.childrenCpu();
            }
            return nanos;
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
            for (ManagedChannel c : channels) {
                c.awaitTermination(5, TimeUnit.SECONDS);
            }
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
