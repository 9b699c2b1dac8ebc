package dev.rollcall.it.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The {@code rollcall:} gRPC target against real workers on loopback: a plain grpc-java channel
 * built with {@code forTarget(resolver.grpcTarget())} calls exactly the compatible workers. The
 * "user call" is gRPC health's {@code Check}, counted on each worker's side.
 */
class GrpcTargetTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    @AutoClose
    private final Closer open = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return open.add(c);
    }

    private WorkerResolver resolver() {
        return closing(WorkerResolver.builder().discovery(discovery)
                .policy(w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"))
                .refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
    }

    private ManagedChannel channel(String target) {
        ManagedChannel c = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        open.add(() -> c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return c;
    }

    /** Counts the health checks it serves. */
    private static final class Counted implements ServerInterceptor {
        final AtomicLong calls = new AtomicLong();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                          ServerCallHandler<Q, R> next) {
            if (call.getMethodDescriptor().getServiceName().equals("grpc.health.v1.Health")) {
                calls.incrementAndGet();
            }
            return next.startCall(call, headers);
        }
    }

    private record Worker(RollcallWorker worker, Counted counted) {
        WorkerEndpoint endpoint() {
            return worker.endpoint();
        }
    }

    private Worker worker(String version, boolean offersHealth) throws Exception {
        Counted counted = new Counted();
        RollcallWorker.Builder b = RollcallWorker.builder().version(version).intercept(counted);
        if (offersHealth) {
            b.service(new HealthStatusManager().getHealthService()); // advertised by its name
        }
        return new Worker(closing(b.start()), counted);
    }

    private static void calls(ManagedChannel channel, int n) {
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
        for (int i = 0; i < n; i++) {
            stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        }
    }

    @Test
    void callsReachExactlyTheCompatibleWorkersAndFollowSnapshots() throws Exception {
        Worker a = worker("1.0.0", true);
        Worker b = worker("1.1.0", true);
        Worker old = worker("2.0.0", true);
        WorkerResolver r = resolver();
        discovery.push(List.of(a.endpoint(), b.endpoint(), old.endpoint()));
        r.await(s -> s.counts().compatible() == 2 && s.counts().pending() == 0, WAIT);

        ManagedChannel channel = channel(r.grpcTarget());
        calls(channel, 40);
        assertThat(a.counted().calls.get()).as("round_robin over a and b").isPositive();
        assertThat(b.counted().calls.get()).isPositive();
        assertThat(old.counted().calls.get()).as("the rejected worker").isZero();

        Worker c = worker("1.2.0", true);
        discovery.push(List.of(a.endpoint(), b.endpoint(), old.endpoint(), c.endpoint()));
        await().atMost(WAIT).untilAsserted(() -> {
            calls(channel, 10);
            assertThat(c.counted().calls.get()).as("the worker that joined").isPositive();
        });

        discovery.push(List.of(b.endpoint(), old.endpoint(), c.endpoint()));
        r.await(s -> s.status(a.endpoint().url()).isEmpty(), WAIT);
        await().atMost(WAIT).untilAsserted(() -> {
            long before = a.counted().calls.get();
            calls(channel, 20);
            assertThat(a.counted().calls.get()).as("the worker that left").isEqualTo(before);
        });
        assertThat(old.counted().calls.get()).isZero();
    }

    @Test
    void aTargetNarrowedToAServiceReachesOnlyTheWorkersOfferingItUntilTheResolverCloses() throws Exception {
        Worker offering = worker("1.0.0", true);
        Worker silent = worker("1.0.0", false);
        WorkerResolver r = resolver();
        discovery.push(List.of(offering.endpoint(), silent.endpoint()));
        r.await(s -> s.counts().compatible() == 2, WAIT);

        ManagedChannel channel = channel(r.grpcTarget("grpc.health.v1.Health"));
        calls(channel, 20);
        assertThat(offering.counted().calls.get()).isEqualTo(20);
        assertThat(silent.counted().calls.get()).isZero();

        r.close();
        await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> calls(channel, 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
                        .contains("is closed")));
        assertThat(offering.counted().calls.get()).as("no call once its resolver closed").isEqualTo(20);
        assertThatThrownBy(() -> r.grpcTarget("not a service")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a service");
    }

    @Test
    void callsFailUnavailableWithTheCountsWhenNoWorkerIsCompatible() throws Exception {
        Worker old = worker("2.0.0", true);
        WorkerResolver r = resolver();
        discovery.push(List.of(old.endpoint()));
        r.await(s -> s.counts().rejected() == 1, WAIT);

        assertThatThrownBy(() -> calls(channel(r.grpcTarget()), 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no compatible worker").contains("1 rejected")
                            .contains(old.endpoint().url());
                });
        // Had a compatible worker, then lost it: calls fail at once with the counts, none reaches
        // the worker that left, and none waits for its deadline.
        Worker gone = worker("1.0.0", true);
        discovery.push(List.of(old.endpoint(), gone.endpoint()));
        r.await(s -> s.counts().compatible() == 1, WAIT);
        ManagedChannel lost = channel(r.grpcTarget());
        calls(lost, 3);
        discovery.push(List.of(old.endpoint()));
        r.await(s -> s.counts().compatible() == 0, WAIT);
        long served = gone.counted().calls.get();
        await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> calls(lost, 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no compatible worker");
                }));
        assertThat(gone.counted().calls.get()).as("calls to the worker that left").isEqualTo(served);

        r.close();
        assertThatThrownBy(() -> calls(channel(r.grpcTarget()), 1))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no live WorkerResolver");
                });
    }

    @Test
    void aTargetWithoutAnIdUsesTheResolverOfTheConfiguration(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        Worker current = worker("1.4.2", true);
        Worker old = worker("1.2.0", true);
        java.nio.file.Path file = dir.resolve("rollcall.properties");
        java.nio.file.Files.writeString(file, """
                rollcall.discovery.type=static
                rollcall.discovery.static.endpoints=%s,%s
                rollcall.policy.type=semver
                rollcall.policy.semver.range=^1.4.0
                """.formatted(current.endpoint().url(), old.endpoint().url()));
        String before = System.getProperty("rollcall.config");
        System.setProperty("rollcall.config", file.toString());
        try {
            ManagedChannel channel = channel("rollcall:///grpc.health.v1.Health");
            HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel).withWaitForReady();
            for (int i = 0; i < 10; i++) {
                stub.withDeadlineAfter(20, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
            }
            assertThat(current.counted().calls.get()).isEqualTo(10);
            assertThat(old.counted().calls.get()).isZero();
        } finally {
            if (before == null) {
                System.clearProperty("rollcall.config");
            } else {
                System.setProperty("rollcall.config", before);
            }
        }
    }

    @Test
    void keyedCallsGoToTheWorkerRouteChoosesForTheKey() throws Exception {
        List<Worker> fleet = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fleet.add(worker("1.0.0", true));
        }
        WorkerResolver r = resolver();
        discovery.push(fleet.stream().map(Worker::endpoint).toList());
        FleetSnapshot s = r.await(snap -> snap.counts().compatible() == 3, WAIT);
        ManagedChannel channel = channel(r.grpcTarget("grpc.health.v1.Health") + "?lb=rollcall_key_affinity");
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel).withWaitForReady();

        for (int k = 0; k < 30; k++) {
            String key = "customer-" + k;
            String owner = s.route("grpc.health.v1.Health", "Check", dev.rollcall.api.registry.Caller.INTERNAL, key)
                    .endpoint().url();
            Worker expected = fleet.stream().filter(w -> w.endpoint().url().equals(owner)).findFirst().orElseThrow();
            long before = expected.counted().calls.get();
            stub.withOption(dev.rollcall.grpc.KeyAffinityLoadBalancerProvider.KEY, key)
                    .withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
            assertThat(expected.counted().calls.get()).as("key %s at its owner %s", key, owner).isEqualTo(before + 1);
        }
    }

    /**
     * The guarantee: a worker killed without a word and restarted at once on its port with a version
     * the policy rejects receives no call through the channel, while calls keep flowing to the
     * others (eight callers, never pausing).
     */
    @Test
    void aWorkerRestartedInPlaceWithARejectedVersionGetsNoCall() throws Exception {
        List<PlainWorker> fleet = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fleet.add(closing(PlainWorker.start(0, "1.0.0")));
        }
        WorkerResolver r = resolver();
        discovery.push(fleet.stream().map(PlainWorker::endpoint).toList());
        r.await(s -> s.counts().compatible() == 3, WAIT);
        ManagedChannel channel = channel(r.grpcTarget());
        calls(channel, 30);
        assertThat(fleet).allSatisfy(w -> assertThat(w.counted.calls.get()).isPositive());

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread caller = new Thread(() -> {
                HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
                while (!stop.get()) {
                    try {
                        stub.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
                        done.incrementAndGet();
                    } catch (StatusRuntimeException e) {
                        failed.incrementAndGet(); // a call in flight on the killed worker
                    }
                }
            }, "grpc-target-caller-" + t);
            caller.start();
            callers.add(caller);
        }
        open.add(() -> {
            stop.set(true);
            for (Thread c : callers) {
                c.join(10_000);
            }
        });
        PlainWorker victim = fleet.get(1);
        await().atMost(WAIT).until(() -> done.get() > 300);
        PlainWorker successor = closing(PlainWorker.start(victim.port(), "2.0.0"));
        victim.kill();
        r.await(s -> s.status(victim.endpoint().url()).map(st -> st.state() == State.REJECTED).orElse(false), WAIT);
        int after = done.get();
        await().atMost(WAIT).until(() -> done.get() > after + 300);
        stop.set(true);

        assertThat(successor.counted.calls.get()).as("calls that reached the rejected instance").isZero();
    }

    @Test
    void theCallObserverEjectsAWorkerWhoseCallsFail() throws Exception {
        PlainWorker doomed = closing(PlainWorker.start(0, "1.0.0"));
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .keepProbeChannels(false).refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(doomed.endpoint()));
        r.awaitWorkers(1, WAIT);
        ManagedChannel direct = ManagedChannelBuilder.forAddress("127.0.0.1", doomed.port()).usePlaintext()
                .intercept(r.callObserver()).build();
        open.add(() -> direct.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        calls(direct, 1);
        doomed.kill();
        // Without a kept connection nothing else would tell the resolver before its hourly refresh.
        assertThatThrownBy(() -> calls(direct, 1)).isInstanceOf(StatusRuntimeException.class);
        FleetSnapshot s = r.await(snap -> snap.counts().compatible() == 0, WAIT);
        assertThat(s.status(doomed.endpoint().url()).orElseThrow().state()).isNotEqualTo(State.COMPATIBLE);
    }

    /** A hand-written worker (unary WorkerInfo and health), killed without a word. */
    private static final class PlainWorker implements AutoCloseable {
        /** Epoll, for SO_REUSEPORT; shared by the test's plain workers and never shut down (daemon threads). */
        private static final io.netty.channel.EventLoopGroup EVENT_LOOP = new io.netty.channel.MultiThreadIoEventLoopGroup(
                2, new io.netty.util.concurrent.DefaultThreadFactory("plain-worker", true),
                io.netty.channel.epoll.EpollIoHandler.newFactory());
        final Counted counted = new Counted();
        private Server server;
        private int port;

        static PlainWorker start(int port, String version) throws Exception {
            PlainWorker w = new PlainWorker();
            String instance = UUID.randomUUID().toString();
            for (int attempt = 0; ; attempt++) {
                w.server = w.build(port, version, instance);
                try {
                    w.server.start();
                    w.port = ((InetSocketAddress) w.server.getListenSockets().get(0)).getPort();
                    return w;
                } catch (java.io.IOException bindFailed) {
                    if (attempt == 100) {
                        throw bindFailed; // the port of a worker killed a moment ago is free within moments
                    }
                    Thread.onSpinWait();
                }
            }
        }

        private Server build(int port, String version, String instance) {
            // SO_REUSEPORT: a successor can listen beside it before it dies, as a hot restart does; a
            // connection dropped by the old process then reconnects to the new one at once.
            return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                    .channelType(io.netty.channel.epoll.EpollServerSocketChannel.class)
                    .bossEventLoopGroup(EVENT_LOOP).workerEventLoopGroup(EVENT_LOOP)
                    .withOption(io.netty.channel.epoll.EpollChannelOption.SO_REUSEPORT, true)
                    .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                        @Override
                        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
                            observer.onNext(WorkerInfoResponse.newBuilder().setVersion(version)
                                    .setInstanceId(instance).build());
                            observer.onCompleted();
                        }
                    })
                    .addService(new HealthStatusManager().getHealthService())
                    .intercept(counted)
                    .build();
        }

        int port() {
            return port;
        }

        WorkerEndpoint endpoint() {
            return WorkerEndpoint.of("127.0.0.1", port());
        }

        /** Gone at once: connections reset, calls in flight fail. */
        void kill() throws InterruptedException {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            kill();
        }
    }
}
