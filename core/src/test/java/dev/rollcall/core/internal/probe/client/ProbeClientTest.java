package dev.rollcall.core.internal.probe.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.Attributes;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Where the probe client's work runs, over a real worker on loopback. */
class ProbeClientTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final ProbeClient.StreamListener IGNORED = new ProbeClient.StreamListener() {
        @Override
        public void answer(ProbeOutcome answer) {
        }

        @Override
        public void ended(Status status) {
        }
    };

    /** The lane's thread, where the probe was started and where its answer came. */
    private record Threads(Thread lane, Thread started, Thread answered, ProbeOutcome outcome) {
    }

    @Test
    void channelsAreBuiltOnTheStarterThreadAndAnsweredOnTheirLane() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").start();
             ProbeClient client = new ProbeClient("probe-lane-test", 1 << 20)) {
            List<ManagedChannel> channels = new ArrayList<>();
            List<CompletableFuture<Threads>> probes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Executor lane = client.lane();
                CompletableFuture<Thread> laneThread = new CompletableFuture<>();
                lane.execute(() -> laneThread.complete(Thread.currentThread()));
                CompletableFuture<Threads> probe = new CompletableFuture<>();
                client.starter().execute(() -> {
                    Thread started = Thread.currentThread();
                    ManagedChannel channel = client.open(worker.endpoint(), lane);
                    synchronized (channels) {
                        channels.add(channel);
                    }
                    client.watchFirst(channel, lane, worker.endpoint(), TIMEOUT, Duration.ZERO, IGNORED).first()
                            .whenComplete((outcome, impossible) -> probe.complete(
                                    new Threads(laneThread.join(), started, Thread.currentThread(), outcome)));
                });
                probes.add(probe);
            }
            try {
                for (CompletableFuture<Threads> probe : probes) {
                    Threads threads = probe.get(10, TimeUnit.SECONDS);
                    assertThat(threads.outcome()).isInstanceOf(ProbeOutcome.Answered.class);
                    // Built and started off the event loops, which only do the network I/O: event
                    // loops that also built channels answered handshakes late (see starter()).
                    assertThat(threads.started().getName()).startsWith("probe-lane-test-start");
                    // The connection, its call and its answer on the lane: no hop between event loops.
                    assertThat(threads.answered()).isSameAs(threads.lane());
                    assertThat(threads.lane().getName()).startsWith("probe-lane-test").doesNotContain("start");
                }
                // The lanes take turns over the client's event loop threads.
                assertThat(probes.stream().map(p -> p.join().lane()).distinct())
                        .hasSize(Math.min(2, Runtime.getRuntime().availableProcessors()));
            } finally {
                synchronized (channels) {
                    channels.forEach(ManagedChannel::shutdownNow);
                }
            }
        }
    }

    @Test
    void aShutDownChannelIsGoneWhenItsSocketHasClosedNotBefore() throws Exception {
        AtomicInteger serverSawClosed = new AtomicInteger();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        out.onNext(WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId("i1").build());
                        out.onCompleted();
                    }
                })
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public void transportTerminated(Attributes transportAttrs) {
                        serverSawClosed.incrementAndGet();
                    }
                }).build().start();
        try (ProbeClient client = new ProbeClient("probe-close-test", 1 << 20)) {
            WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
            OpenSockets sockets = new OpenSockets();
            Executor lane = client.lane();
            ManagedChannel channel = client.open(endpoint, lane, null, sockets);
            assertThat(sockets.open()).as("a channel connects lazily").isZero();
            assertThat(client.probe(channel, endpoint, TIMEOUT).get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ProbeOutcome.Answered.class);
            assertThat(sockets.open()).as("sockets open after the answer").isEqualTo(1);
            CompletableFuture<Void> whileOpen = new CompletableFuture<>();
            sockets.whenNoneOpen(whileOpen);
            assertThat(whileOpen).as("the connection is still open").isNotDone();

            CompletableFuture<Void> gone = new CompletableFuture<>();
            lane.execute(() -> {
                channel.shutdownNow();
                client.whenClosed(sockets, gone);
            });
            gone.get(10, TimeUnit.SECONDS);
            assertThat(sockets.open()).isZero();
            assertThat(whileOpen).isDone();
            Awaitility.await().atMost(TIMEOUT).until(() -> serverSawClosed.get() == 1);
            assertThat(channel.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStreamAsksForHeartbeatsAndPassesRepeatsOnUndecodedWithTheGrant() throws Exception {
        BlockingQueue<Integer> asked = new LinkedBlockingQueue<>();
        WorkerInfoResponse first = WorkerInfoResponse.newBuilder()
                .setVersion("1.0.0").setInstanceId("i1").setRevision(1).setHeartbeatMillis(5_000).build();
        WorkerInfoResponse changed = first.toBuilder().setRevision(2)
                .setState(ServingState.DRAINING).build();
        Server server = NettyServerBuilder.forAddress(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void watchWorkerInfo(WorkerInfoRequest request,
                                                StreamObserver<WorkerInfoResponse> out) {
                        asked.add(request.getHeartbeatMillis());
                        out.onNext(first);
                        out.onNext(first);       // a heartbeat: the same revision again
                        out.onNext(first);
                        out.onNext(changed);     // a change
                        out.onNext(changed);     // and its heartbeat
                    }
                }).build().start();
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        try (ProbeClient client = new ProbeClient("probe-heartbeat-test", 1 << 20)) {
            WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", server.getPort());
            ManagedChannel channel = client.open(endpoint);
            try {
                ProbeClient.Watched watched = client.watchFirst(channel, client.lane(), endpoint, TIMEOUT,
                        Duration.ofSeconds(5), new ProbeClient.StreamListener() {
                            @Override
                            public void answer(ProbeOutcome answer) {
                                heard.add("answer " + ((ProbeOutcome.Answered) answer).revision()
                                        + " " + ((ProbeOutcome.Answered) answer).state());
                                done.countDown();
                            }

                            @Override
                            public void repeated() {
                                heard.add("repeated");
                            }

                            @Override
                            public void ended(Status status) {
                                heard.add("ended " + status.getCode());
                            }
                        });
                ProbeOutcome firstAnswer = watched.first().get(10, TimeUnit.SECONDS);
                assertThat(((ProbeOutcome.Answered) firstAnswer).revision()).isEqualTo(1);
                assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> heard.size() == 4);
                assertThat(heard).containsExactly("repeated", "repeated", "answer 2 DRAINING", "repeated");
                assertThat(asked.poll(10, TimeUnit.SECONDS)).as("heartbeat_millis asked for").isEqualTo(5_000);
                assertThat(watched.stream().heartbeatMillis()).as("what the worker granted").isEqualTo(5_000);
                watched.stream().cancel();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
