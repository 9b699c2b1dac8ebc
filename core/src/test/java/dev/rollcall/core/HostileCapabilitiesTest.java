package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Workers on loopback that lie about their capabilities (too many, a name too long, a control
 * character, a terminal escape or a bidirectional override in a name or version, a name twice, a
 * version that is not one), in their first answer or pushed later: each is left out, the reason
 * naming the bound it broke with the peer's text escaped and bounded, and the honest worker beside
 * it keeps serving every query, with and without requirements.
 */
class HostileCapabilitiesTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static Capability wire(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    private static WorkerInfoResponse.Builder answer() {
        return WorkerInfoResponse.newBuilder().setVersion("1.4.0").setInstanceId("hostile");
    }

    private static List<Capability> many(int n) {
        List<Capability> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(wire("udf:f" + i, ""));
        }
        return list;
    }

    static Stream<Arguments> lies() {
        return Stream.of(
                Arguments.of("129 capabilities", many(129), "129 capabilities (at most 128)"),
                Arguments.of("a name of 129 characters", List.of(wire("n".repeat(129), "")),
                        "capability name '" + "n".repeat(40) + "...(89 more)' is 129 characters long (at most 128)"),
                Arguments.of("a line break and a forged line in a name",
                        List.of(wire("udf:geo\n[main] INFO FORGED", "")),
                        "capability name 'udf:geo\\n[main] INFO FORGED' is not letters, digits and . _ : / -"
                                + " (starting with a letter or digit)"),
                Arguments.of("a bidirectional override in a name", List.of(wire("udf:\u202egeo", "")),
                        "capability name 'udf:\\u202egeo' is not letters, digits and . _ : / -"
                                + " (starting with a letter or digit)"),
                Arguments.of("a terminal escape in a version", List.of(wire("plan-protocol", "3\u001b[31m")),
                        "capability 'plan-protocol': version '3\\u001b[31m' is not a version"
                                + " (1, 1.2 or 1.2.3, then an optional -pre.release and +build)"),
                Arguments.of("a name twice", List.of(wire("plan-protocol", "2"), wire("plan-protocol", "3")),
                        "capability 'plan-protocol' is given twice ('plan-protocol=2' and 'plan-protocol=3')"),
                Arguments.of("a version that is not a version", List.of(wire("datafusion", "latest")),
                        "capability 'datafusion': version 'latest' is not a version"
                                + " (1, 1.2 or 1.2.3, then an optional -pre.release and +build)"),
                Arguments.of("a version of 65 characters", List.of(wire("datafusion", "1.0.0+" + "b".repeat(59))),
                        "capability 'datafusion': version '1.0.0+" + "b".repeat(34)
                                + "...(25 more)' is 65 characters long (at most 64)"));
    }

    private record Fixed(Set<WorkerEndpoint> endpoints) implements WorkerDiscovery {
        @Override
        public void start(CandidateListener l) {
            l.onCandidates(endpoints);
        }

        @Override
        public void close() {
        }
    }

    private static WorkerResolver resolver(String name, ScriptedWorker... workers) {
        Set<WorkerEndpoint> all = Set.of(workers[0].endpoint(), workers[1].endpoint());
        return WorkerResolver.builder().name(name).discovery(new Fixed(all)).policy(w -> Verdict.accept())
                .fetchSchemas(false).probeTimeout(Duration.ofSeconds(5))
                .backoff(Duration.ofMillis(200), Duration.ofSeconds(1)).build();
    }

    private static boolean leftOut(FleetSnapshot s, ScriptedWorker w) {
        return s.status(w.endpoint().url()).map(st -> st.state() == State.UNREACHABLE).orElse(false);
    }

    /** The honest worker serves every query, with and without requirements; the liar none. */
    private static void honestOneServes(WorkerResolver resolver, ScriptedWorker honest) {
        try (SnapshotLease any = resolver.lease();
             SnapshotLease needing = resolver.lease(Requirements.of("udf:geo_distance"))) {
            assertThat(any.snapshot().compatibleEndpoints()).containsExactly(honest.endpoint());
            assertThat(needing.snapshot().compatibleEndpoints()).containsExactly(honest.endpoint());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lies")
    void aWorkerWhoseCapabilitiesBreakABoundIsLeftOutNamingItAndTheOthersKeepServing(
            String lie, List<Capability> capabilities, String bound) throws Exception {
        try (ScriptedWorker honest = ScriptedWorker.answering(answer().setInstanceId("honest")
                .addCapabilities(wire("udf:geo_distance", "")).build());
             ScriptedWorker liar = ScriptedWorker.answering(answer().addAllCapabilities(capabilities).build());
             WorkerResolver resolver = resolver("hostile-capabilities", honest, liar)) {
            FleetSnapshot s = resolver.await(x -> x.workers().size() == 1 && leftOut(x, liar), WAIT);

            WorkerStatus status = s.status(liar.endpoint().url()).orElseThrow();
            assertThat(status.reason()).isEqualTo("malformed answer: " + bound);
            assertThat(PeerText.isClean(status.reason())).as("reason %s", status.reason()).isTrue();
            assertThat(s.workers().get(0).capabilities()).isEqualTo(Capabilities.of("udf:geo_distance"));
            honestOneServes(resolver, honest);
        }
    }

    @Test
    void aWorkerThatPushesCapabilitiesBreakingABoundIsTakenOutAndTheOthersKeepServing() throws Exception {
        try (ScriptedWorker honest = ScriptedWorker.answering(answer().setInstanceId("honest")
                .addCapabilities(wire("udf:geo_distance", "")).build());
             ScriptedWorker turning = ScriptedWorker.answering(answer()
                     .addCapabilities(wire("udf:geo_distance", "")).build());
             WorkerResolver resolver = resolver("hostile-push", honest, turning)) {
            resolver.awaitWorkers(2, WAIT);

            turning.answerCapabilities(many(129));
            FleetSnapshot s = resolver.await(x -> !x.compatibleEndpoints().contains(turning.endpoint()), WAIT);
            assertThat(s.status(turning.endpoint().url()).orElseThrow().reason())
                    .isEqualTo("malformed answer: 129 capabilities (at most 128)");
            resolver.await(x -> x.workers().size() == 1, WAIT);
            honestOneServes(resolver, honest);
        }
    }
}
