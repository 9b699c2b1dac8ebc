package dev.rollcall.core.internal.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.fleet.TrackerHarness;
import dev.rollcall.core.internal.schema.VersionSchemas;
import dev.rollcall.core.internal.serial.VirtualTime;
import dev.rollcall.core.internal.settings.LabelSettings;
import dev.rollcall.core.internal.settings.SchemaSettings;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a snapshot shows of the tracked workers, built by {@link SnapshotBuilder} with schema fetching on. */
class SnapshotBuilderTest {

    private final VirtualTime time = new VirtualTime();
    private final Set<String> schemaKnown = new HashSet<>();
    private final List<String> asked = new ArrayList<>();
    private final SnapshotBuilder builder = new SnapshotBuilder(
            w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"),
            Clock.fixed(Instant.EPOCH, ZoneOffset.UTC),
            new VersionSchemas(new SchemaSettings(true, 1 << 20, KeyPaths.none()), time.context(),
                    TrackerHarness.HALF, null, Duration.ofSeconds(1),
                    Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(1)), () -> { }),
            KeyPaths.none(),
            new LabelSettings(LabelSelector.everything(), LabelSelector.everything(), 1, Duration.ZERO),
            time::read, FleetSnapshot.builder(0).publishedAt(Instant.EPOCH).build());

    private static TestWorker answered(int port, String version, ServingState serving) {
        return new TestWorker(WorkerEndpoint.of("127.0.0.1", port)).answer(version, "i" + port, serving);
    }

    private FleetSnapshot build(List<TestWorker> workers) {
        return builder.build(workers, null, null, t -> {
            asked.add(t.info().version());
            return schemaKnown.contains(t.info().version());
        });
    }

    private static State state(FleetSnapshot s, TestWorker t) {
        return s.status(t.url()).map(WorkerStatus::state).orElseThrow();
    }

    @Test
    void workersWaitForTheirVersionsSchemaAndTheVersionIsAskedOncePerRun() {
        TestWorker a = answered(7001, "1.0.0", ServingState.SERVING);
        TestWorker b = answered(7002, "1.0.0", ServingState.SERVING);
        TestWorker c = answered(7003, "1.1.0", ServingState.SERVING);
        TestWorker draining = answered(7004, "1.1.0", ServingState.DRAINING);
        TestWorker rejected = answered(7005, "2.0.0", ServingState.SERVING);
        TestWorker pending = new TestWorker(WorkerEndpoint.of("127.0.0.1", 7006));
        List<TestWorker> all = List.of(a, b, c, draining, rejected, pending);
        schemaKnown.add("1.1.0");

        FleetSnapshot first = build(all);
        assertThat(state(first, a)).isEqualTo(State.PENDING);
        assertThat(first.status(a.url()).orElseThrow().reason()).isEqualTo("fetching the schema of version '1.0.0'");
        assertThat(state(first, b)).isEqualTo(State.PENDING);
        assertThat(state(first, c)).isEqualTo(State.COMPATIBLE);
        assertThat(state(first, draining)).as("not asked about: it takes no work").isEqualTo(State.DRAINING);
        assertThat(state(first, rejected)).isEqualTo(State.PENDING);
        assertThat(state(first, pending)).isEqualTo(State.PENDING);
        assertThat(first.workers()).extracting(WorkerInfo::endpoint).containsExactly(c.endpoint());
        assertThat(asked).as("once per run of workers of one version").containsExactly("1.0.0", "1.1.0", "2.0.0");

        schemaKnown.add("1.0.0");
        schemaKnown.add("2.0.0");
        FleetSnapshot second = build(all);
        assertThat(second.number()).isEqualTo(first.number() + 1);
        assertThat(second.workers()).extracting(WorkerInfo::endpoint)
                .containsExactly(a.endpoint(), b.endpoint(), c.endpoint());
        assertThat(state(second, rejected)).isEqualTo(State.REJECTED);
        assertThat(second.status(c.url())).as("an unchanged worker keeps its status object")
                .containsSame(first.status(c.url()).orElseThrow());
        assertThat(build(all)).as("nothing changed: no snapshot").isNull();
    }

    @Test
    void everyTestRunChecksEachBuildOfWhatChangedAgainstAFullOneAndFindsAWorkerThatChangedWithoutNotingIt() {
        assertThat(System.getProperty(SnapshotBuilder.CHECK_BUILDS_PROPERTY))
                .as("set by the build for every test run, assertions on or off").isEqualTo("true");
        assertThat(SnapshotBuilder.CHECK_BUILDS).isTrue();
        SnapshotBuilder direct = new SnapshotBuilder(VersionPolicy.rule(w -> Verdict.accept()),
                Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), null, KeyPaths.none(),
                new LabelSettings(LabelSelector.everything(), LabelSelector.everything(), 1, Duration.ZERO),
                time::read, FleetSnapshot.builder(0).publishedAt(Instant.EPOCH).build());
        Changes changes = new Changes();
        TestWorker a = new TestWorker(WorkerEndpoint.of("127.0.0.1", 7101));
        TestWorker b = new TestWorker(WorkerEndpoint.of("127.0.0.1", 7102));
        List<ShownWorker> all = List.of(a, b);
        changes.joined(a);
        changes.joined(b);
        assertThat(direct.build(changes, () -> all, null, null, t -> true)).as("the first build reads every worker")
                .isNotNull();
        a.answer("1.0.0", "ia", ServingState.SERVING);
        FleetSnapshot noted = direct.build(changes, () -> all, null, null, t -> true);
        assertThat(noted.workers()).extracting(WorkerInfo::endpoint).containsExactly(a.endpoint());

        b.answerWithoutNoting("1.0.0", "ib", ServingState.SERVING);
        assertThatThrownBy(() -> direct.build(changes, () -> all, null, null, t -> true))
                .isInstanceOf(AssertionError.class).hasMessageContaining(b.url());
    }
}
