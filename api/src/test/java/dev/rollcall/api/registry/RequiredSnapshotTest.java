package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import dev.rollcall.api.Capabilities;
import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A snapshot narrowed to requirements ({@link FleetSnapshot#requiring}) is a view over the snapshot
 * it narrows: whatever the fleet and the requirements, every one of its answers must be exactly
 * what a snapshot built from the same statuses, narrowed by hand, answers.
 */
class RequiredSnapshotTest {

    private static final String[] VERSIONS = {"1.0.0", "1.1.0", "2.0.0"};
    private static final String[] CAPABILITIES = {"udf:geo_distance", "udf:h3", "plan-protocol=2", "plan-protocol=3",
        "plan-protocol=3.1", "plan-protocol", "datafusion=55.0.1", "datafusion=56.0.0", "datafusion=55.1.0-rc.1", "gpu"};
    private static final String[] REQUIREMENTS = {"udf:geo_distance", "udf:h3", "plan-protocol>=3", "plan-protocol=2",
        "plan-protocol", "datafusion^55", "datafusion>=55.1.0-rc.0", "datafusion 55.x || 56", "gpu", "nobody:has-it",
        "plan-protocol<3 || >=3.1"};
    private static final String[] SERVICES = {"k.A", "k.B"};
    private static final String[] HANDLERS = {"Get", "Put"};
    private static final Map<String, ProtoSchema> SCHEMAS = Map.of("1.0.0", schema("A"), "2.0.0", schema("B"));

    private static ProtoSchema schema(String service) {
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName(service + ".proto").setPackage("k")
                .setSyntax("proto3").addMessageType(DescriptorProto.newBuilder().setName("M" + service))
                .addService(ServiceDescriptorProto.newBuilder().setName(service).addMethod(MethodDescriptorProto
                        .newBuilder().setName("Get").setInputType(".k.M" + service).setOutputType(".k.M" + service)))
                .build();
        try {
            return ProtoSchema.of(List.of(FileDescriptor.buildFrom(file, new FileDescriptor[0])
                    .findServiceByName(service)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static WorkerStatus random(SplittableRandom r, int port) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port);
        // Mostly compatible, so that requirements have workers to narrow.
        WorkerStatus.State state = r.nextInt(3) > 0 ? WorkerStatus.State.COMPATIBLE
                : WorkerStatus.State.values()[r.nextInt(WorkerStatus.State.values().length)];
        boolean answered = state == WorkerStatus.State.COMPATIBLE || state == WorkerStatus.State.REJECTED
                || state == WorkerStatus.State.OUTSIDE_SUBSET || state == WorkerStatus.State.LACKS_REQUIREMENT
                || r.nextBoolean() && state != WorkerStatus.State.UNREACHABLE;
        if (!answered) {
            return new WorkerStatus(e, state, "why " + r.nextInt(9), Optional.empty());
        }
        Map<String, String> byName = new java.util.HashMap<>();
        for (int n = r.nextInt(5); n > 0; n--) {
            String c = CAPABILITIES[r.nextInt(CAPABILITIES.length)];
            byName.put(c.split("=")[0], c);
        }
        List<ServiceInfo> services = new ArrayList<>();
        for (String s : SERVICES) {
            if (r.nextBoolean()) {
                List<HandlerInfo> handlers = new ArrayList<>();
                for (String h : HANDLERS) {
                    if (r.nextBoolean()) {
                        handlers.add(HandlerInfo.of(h, Visibility.values()[r.nextInt(3)]));
                    }
                }
                services.add(new ServiceInfo(s, Visibility.PUBLIC, handlers));
            }
        }
        WorkerInfo info = new WorkerInfo(e, VERSIONS[r.nextInt(VERSIONS.length)], "i" + port, Map.of(), services,
                Capabilities.of(byName.values().toArray(new String[0])));
        return new WorkerStatus(e, state, state == WorkerStatus.State.COMPATIBLE ? "" : "why " + r.nextInt(9),
                Optional.of(info));
    }

    private static Requirements randomRequirements(SplittableRandom r) {
        Set<String> texts = new LinkedHashSet<>();
        for (int n = 1 + r.nextInt(3); n > 0; n--) {
            texts.add(REQUIREMENTS[r.nextInt(REQUIREMENTS.length)]);
        }
        return Requirements.of(texts);
    }

    private static FleetSnapshot.Builder builder(long number) {
        return FleetSnapshot.builder(number).publishedAt(Instant.EPOCH).staleSince(Instant.EPOCH.plusSeconds(5))
                .policy("semver ^1").selection(Optional.of("1.1.0"), "the newest with a quorum").schemas(SCHEMAS)
                .keyPaths(KeyPaths.of(Map.of("k.A.Get", "id"))).selector("zone=eu-1").preference("none preferred")
                .discoveryProblem("etcd down").overKeptCap(3);
    }

    /** What the narrowed snapshot must be: the statuses narrowed by hand, built like any other snapshot. */
    private static FleetSnapshot narrowedByHand(List<WorkerStatus> statuses, Requirements all) {
        List<WorkerStatus> narrowed = new ArrayList<>();
        for (WorkerStatus s : statuses) {
            Optional<String> why = s.state() == WorkerStatus.State.COMPATIBLE
                    ? all.whyNotMetBy(s.info().orElseThrow().capabilities()) : Optional.empty();
            narrowed.add(why.isEmpty() ? s
                    : new WorkerStatus(s.endpoint(), WorkerStatus.State.LACKS_REQUIREMENT, why.get(), s.info()));
        }
        return builder(7).statuses(narrowed).requirements(all).build();
    }

    /** The value, or the exception's class and message: equal answers fail equally. */
    private static Object outcome(Supplier<?> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    private static void assertSameAnswers(FleetSnapshot view, FleetSnapshot expected, SplittableRandom r) {
        assertThat(view.number()).isEqualTo(expected.number());
        assertThat(view.publishedAt()).isEqualTo(expected.publishedAt());
        assertThat(view.staleSince()).isEqualTo(expected.staleSince());
        assertThat(view.discoveryProblem()).isEqualTo(expected.discoveryProblem());
        assertThat(view.policy()).isEqualTo(expected.policy());
        assertThat(view.requirements()).isEqualTo(expected.requirements());
        assertThat(view.workers()).isEqualTo(expected.workers());
        assertThat(view.compatibleEndpoints()).isEqualTo(expected.compatibleEndpoints());
        assertThat(view.counts()).isEqualTo(expected.counts());
        assertThat(view.statuses()).isEqualTo(expected.statuses());
        assertThat(view.selection()).isEqualTo(expected.selection());
        assertThat(view.versionHistogram()).isEqualTo(expected.versionHistogram());
        assertThat(view.capabilities()).isEqualTo(expected.capabilities());
        assertThat(view.toString()).isEqualTo(expected.toString());
        for (WorkerStatus s : expected.statuses()) {
            String url = s.endpoint().url();
            assertThat(view.status(url)).isEqualTo(expected.status(url));
            assertThat(view.status("i" + s.endpoint().port())).isEqualTo(expected.status("i" + s.endpoint().port()));
            assertThat(view.version(url)).isEqualTo(expected.version(url));
            assertThat(view.symbols().forWorker(s.endpoint())).isEqualTo(expected.symbols().forWorker(s.endpoint()));
        }
        assertThat(view.symbols().protoServices()).isEqualTo(expected.symbols().protoServices());
        assertThat(outcome(() -> view.keyExtractors().keyPath("k.A", "Get")))
                .isEqualTo(outcome(() -> expected.keyExtractors().keyPath("k.A", "Get")));
        assertThat(view.services()).isEqualTo(expected.services());
        assertThat(view.targets()).isEqualTo(expected.targets());
        for (String service : SERVICES) {
            assertThat(view.workersOffering(service)).isEqualTo(expected.workersOffering(service));
            assertThat(view.latestEndpoints(service)).isEqualTo(expected.latestEndpoints(service));
            for (String handler : HANDLERS) {
                for (Caller caller : Caller.values()) {
                    assertThat(outcome(() -> view.target(service, handler, caller)))
                            .isEqualTo(outcome(() -> expected.target(service, handler, caller)));
                    String key = "key-" + r.nextInt(1000);
                    assertThat(outcome(() -> view.route(service, handler, caller, key)))
                            .isEqualTo(outcome(() -> expected.route(service, handler, caller, key)));
                }
            }
        }
        Requirements more = randomRequirements(r);
        assertThat(view.workersWith(more)).isEqualTo(expected.workersWith(more));
        assertThat(view.workersWith(Requirements.none())).isEqualTo(expected.workers());
    }

    @Test
    void aNarrowedSnapshotAnswersAsTheSnapshotNarrowedByHandWhateverTheFleetAndTheRequirements() {
        SplittableRandom r = new SplittableRandom(66);
        for (int round = 0; round < 200; round++) {
            List<WorkerStatus> statuses = new ArrayList<>();
            for (int port = 7000, n = r.nextInt(60); n > 0; n--) {
                port += 1 + r.nextInt(3);
                statuses.add(random(r, port));
            }
            FleetSnapshot snapshot = builder(7).statuses(statuses).build();
            Requirements requirements = randomRequirements(r);
            FleetSnapshot view = snapshot.requiring(requirements);
            assertSameAnswers(view, narrowedByHand(statuses, requirements), r);

            // Narrowing again adds to the requirements, as narrowing by both at once does.
            Requirements more = randomRequirements(r);
            assertSameAnswers(view.requiring(more), narrowedByHand(statuses, requirements.and(more)), r);
        }
    }

    @Test
    void workersWithIsTheFilterOverTheCompatibleWorkers() {
        SplittableRandom r = new SplittableRandom(67);
        for (int round = 0; round < 300; round++) {
            List<WorkerStatus> statuses = new ArrayList<>();
            for (int port = 7000, n = r.nextInt(120); n > 0; n--) {
                port += 1 + r.nextInt(3);
                statuses.add(random(r, port));
            }
            FleetSnapshot snapshot = builder(1).statuses(statuses).build();
            Requirements requirements = randomRequirements(r);
            assertThat(snapshot.workersWith(requirements))
                    .as("%s in %s", requirements, statuses)
                    .isEqualTo(snapshot.workers().stream().filter(requirements::isMetBy).toList());
            Set<String> names = new java.util.TreeSet<>();
            snapshot.workers().forEach(w -> w.capabilities().asList().forEach(c -> names.add(c.name())));
            assertThat(snapshot.capabilities()).containsExactlyElementsOf(names);
        }
    }

    @Test
    void noRequirementsGiveTheSnapshotItselfAndAnUnmetOneLeavesNoWorker() {
        List<WorkerStatus> statuses = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(68);
        for (int port = 7000; port < 7040; port++) {
            statuses.add(random(r, port));
        }
        FleetSnapshot snapshot = builder(3).statuses(statuses).build();
        assertThat(snapshot.requiring(Requirements.none())).isSameAs(snapshot);
        FleetSnapshot view = snapshot.requiring(Requirements.of("udf:geo_distance"));
        assertThat(view.requiring(Requirements.none())).isSameAs(view);

        FleetSnapshot nobody = snapshot.requiring(Requirements.of("udf:nobody-has-it"));
        assertThat(nobody.workers()).isEmpty();
        assertThat(nobody.counts().lacksRequirement())
                .isEqualTo(snapshot.counts().compatible() + snapshot.counts().lacksRequirement());
        assertThat(nobody.toString()).startsWith("snapshot 3 requiring udf:nobody-has-it (");
        assertThat(nobody.statuses()).filteredOn(s -> s.state() == WorkerStatus.State.LACKS_REQUIREMENT)
                .extracting(WorkerStatus::reason).contains("lacks udf:nobody-has-it");
    }

    @Test
    void manyDistinctRequirementsAreAnsweredAlikeBeyondWhatASnapshotKeeps() {
        // A snapshot keeps a few views and the matches of a few dozen requirements: past those bounds
        // (a requester naming new requirements each time) the answers must not change.
        List<WorkerStatus> statuses = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(70);
        for (int port = 7000; port < 7080; port++) {
            statuses.add(random(r, port));
        }
        FleetSnapshot snapshot = builder(5).statuses(statuses).build();
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < CapabilityIndex.MATCH_CACHE + ImmutableFleetSnapshot.KEPT_VIEWS + 10; i++) {
                Requirements required = Requirements.of("plan-protocol>=2.0." + i, i % 2 == 0 ? "gpu" : "udf:h3");
                FleetSnapshot expected = narrowedByHand(statuses, required);
                assertThat(snapshot.requiring(required).statuses()).as("%s", required).isEqualTo(expected.statuses());
                assertThat(snapshot.workersWith(required)).as("%s", required).isEqualTo(expected.workers());
            }
        }
    }

    @Test
    void theSelectionEventsBetweenANarrowedSnapshotAndItsBaseKeepTheCohort() {
        List<WorkerStatus> statuses = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(69);
        for (int port = 7000; port < 7040; port++) {
            statuses.add(random(r, port));
        }
        FleetSnapshot snapshot = builder(3).statuses(statuses).build();
        FleetSnapshot view = snapshot.requiring(Requirements.of("gpu"));
        // A listener comparing a lease's snapshot with the published one sees workers leave, never a cohort switch.
        assertThat(FleetEvent.between(snapshot, view)).noneMatch(e -> e instanceof FleetEvent.CohortSwitched);
    }
}
