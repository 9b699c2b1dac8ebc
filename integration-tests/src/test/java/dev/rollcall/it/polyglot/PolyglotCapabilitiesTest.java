package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.ReferenceWorker.Exit;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Capabilities advertised by the Node and Python reference workers, judged as a Java worker's are:
 * real processes on loopback, a real resolver, leases with requirements. A malformed capability
 * stops a worker at its start, naming it; a capability dropped at run time (on standard input, as
 * labels change) is pushed and leaves the next lease that needs it.
 */
class PolyglotCapabilitiesTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closer = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private WorkerResolver resolver(WorkerEndpoint... workers) throws Exception {
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .fetchSchemas(false).build());
        discovery.push(List.of(workers));
        r.await(s -> s.counts().compatible() == workers.length, WAIT);
        return r;
    }

    private static List<WorkerEndpoint> endpoints(SnapshotLease lease) {
        return lease.snapshot().workers().stream().map(WorkerInfo::endpoint).toList();
    }

    private static WorkerStatus status(SnapshotLease lease, WorkerEndpoint worker) {
        return lease.snapshot().status(worker.url()).orElseThrow();
    }

    @Test
    void aLeaseWithRequirementsTakesExactlyTheWorkersOfAnyLanguageThatMeetThem() throws Exception {
        RollcallWorker java = closer.add(RollcallWorker.builder().version("1.4.0")
                .capabilities("udf:geo_distance", "plan-protocol=2").start());
        ReferenceWorker node = closer.add(ReferenceWorker.start(Language.NODE, "1.4.0",
                "--capability", "udf:geo_distance", "--capability", "plan-protocol=3"));
        ReferenceWorker python = closer.add(ReferenceWorker.start(Language.PYTHON, "1.4.0",
                "--capability", "plan-protocol=3.1", "--capability", "datafusion=55.0.1"));
        WorkerResolver r = resolver(java.endpoint(), node.endpoint(), python.endpoint());

        FleetSnapshot fleet = r.pin();
        assertThat(fleet.status(node.endpoint().url()).orElseThrow().info().orElseThrow().capabilities())
                .isEqualTo(Capabilities.of("udf:geo_distance", "plan-protocol=3"));
        assertThat(fleet.status(python.endpoint().url()).orElseThrow().info().orElseThrow().capabilities())
                .isEqualTo(Capabilities.of("plan-protocol=3.1", "datafusion=55.0.1"));
        assertThat(fleet.capabilities()).containsExactly("datafusion", "plan-protocol", "udf:geo_distance");

        try (SnapshotLease geo = r.lease(Requirements.of("udf:geo_distance"))) {
            assertThat(endpoints(geo)).as("%s", geo.snapshot().statuses())
                    .containsExactlyInAnyOrder(java.endpoint(), node.endpoint());
            assertThat(status(geo, python.endpoint())).satisfies(s -> {
                assertThat(s.state()).isEqualTo(State.LACKS_REQUIREMENT);
                assertThat(s.reason()).isEqualTo("lacks udf:geo_distance");
            });
        }
        try (SnapshotLease protocol3 = r.lease(Requirements.of("plan-protocol>=3"))) {
            assertThat(endpoints(protocol3)).as("3 and 3.1 meet >=3").containsExactlyInAnyOrder(node.endpoint(),
                    python.endpoint());
            assertThat(status(protocol3, java.endpoint())).satisfies(s -> {
                assertThat(s.state()).isEqualTo(State.LACKS_REQUIREMENT);
                assertThat(s.reason()).isEqualTo("lacks plan-protocol>=3 (has plan-protocol=2)");
            });
        }
        try (SnapshotLease both = r.lease(Requirements.of("udf:geo_distance", "plan-protocol>=3"));
             SnapshotLease any = r.lease()) {
            assertThat(endpoints(both)).containsExactly(node.endpoint());
            assertThat(both.snapshot().counts().lacksRequirement()).isEqualTo(2);
            assertThat(endpoints(any)).as("a query that needs nothing keeps every compatible worker").hasSize(3);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void aCapabilityDroppedAtRunTimeLeavesTheNextLeaseThatNeedsItAndOneAddedJoinsIt(Language language)
            throws Exception {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.4.0", "--capability", "udf:geo_distance"));
        WorkerResolver r = resolver(worker.endpoint());
        Requirements geo = Requirements.of("udf:geo_distance");
        try (SnapshotLease lease = r.lease(geo)) {
            assertThat(endpoints(lease)).containsExactly(worker.endpoint());
        }

        worker.command("drop-capability udf:geo_distance");
        r.await(s -> s.workersWith(geo).isEmpty(), WAIT);
        try (SnapshotLease lease = r.lease(geo)) {
            assertThat(endpoints(lease)).isEmpty();
            assertThat(status(lease, worker.endpoint()).reason()).isEqualTo("lacks udf:geo_distance");
        }
        try (SnapshotLease lease = r.lease()) {
            assertThat(endpoints(lease)).as("still compatible for queries that need nothing")
                    .containsExactly(worker.endpoint());
        }

        worker.command("capability udf:geo_distance=2.1");
        Requirements geo2 = Requirements.of("udf:geo_distance>=2");
        r.await(s -> !s.workersWith(geo2).isEmpty(), WAIT);
        try (SnapshotLease lease = r.lease(geo2)) {
            assertThat(endpoints(lease)).containsExactly(worker.endpoint());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Language.class)
    void capabilitiesAreSentOnBothCallsAndAChangeIsPushedWithAHigherRevisionWhileABadOneIsRefused(Language language) {
        ReferenceWorker worker = closer.add(ReferenceWorker.start(language, "1.4.0",
                "--capability", "udf:geo_distance", "--capability", "datafusion=55.0.1"));
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build();
        closer.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel);

        WorkerInfoResponse unary = stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                .workerInfo(WorkerInfoRequest.getDefaultInstance());
        assertThat(unary.getCapabilitiesList()).as("in name order").containsExactly(
                capability("datafusion", "55.0.1"), capability("udf:geo_distance", ""));
        Iterator<WorkerInfoResponse> stream = stub.withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .watchWorkerInfo(WorkerInfoRequest.getDefaultInstance());
        assertThat(stream.next()).as("the stream's first answer is the unary answer").isEqualTo(unary);

        worker.command("capability udf:geo_distance\u001b[2J=1"); // refused: nothing changes, nothing is sent
        worker.command("capability udf:geo_distance"); // it has it already: nothing is sent
        worker.command("drop-capability datafusion");
        WorkerInfoResponse changed = stream.next();
        assertThat(changed.getCapabilitiesList()).containsExactly(capability("udf:geo_distance", ""));
        assertThat(changed.getRevision()).isGreaterThan(unary.getRevision());
        await().atMost(WAIT).untilAsserted(() -> assertThat(worker.output())
                .contains("capability name 'udf:geo_distance\\u001b[2J' is not letters, digits"));
        assertThat(worker.output()).as("the refused command is logged escaped").doesNotContain("\u001b");
    }

    private static Capability capability(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    static Stream<Arguments> malformedCapabilities() {
        String tooMany = "c0";
        Stream<Arguments> cases = Stream.of(
                arguments(List.of("udf:geo distance"),
                        "capability name 'udf:geo distance' is not letters, digits and . _ : / -"),
                arguments(List.of("plan-protocol=3.x"),
                        "capability 'plan-protocol': version '3.x' is not a version"),
                arguments(List.of("datafusion=55.0.0-rc.99999999999999999999"),
                        "version '55.0.0-rc.99999999999999999999' has a pre-release number larger than 9223372036854775807"),
                arguments(List.of("udf:\u001b[2Jgeo"), "capability name 'udf:\\u001b[2Jgeo' is not letters"),
                arguments(List.of("x".repeat(129)), "is 129 characters long (at most 128)"),
                arguments(List.of("plan-protocol=2", "plan-protocol=3"),
                        "capability 'plan-protocol' is given twice ('plan-protocol=2' and 'plan-protocol=3')"),
                arguments(Stream.iterate(0, i -> i + 1).limit(129).map(i -> tooMany + i).toList(),
                        "129 capabilities (at most 128)"));
        return cases.flatMap(c -> Stream.of(Language.values()).map(l -> arguments(l, c.get()[0], c.get()[1])));
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("malformedCapabilities")
    void aWorkerStartedWithAMalformedCapabilityExitsNamingIt(Language language, List<String> capabilities,
                                                            String error) {
        String[] args = capabilities.stream().flatMap(c -> Stream.of("--capability", c)).toArray(String[]::new);

        Exit exit = ReferenceWorker.runUntilExit(language, "1.4.0", args);

        assertThat(exit.code()).as("exit code; output:%n%s", exit.output()).isEqualTo(2);
        assertThat(exit.output()).contains("--capability").contains(error)
                .as("no raw control character").doesNotContain("\u001b");
    }
}
