package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.ReferenceWorker.Language;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The Python worker restarted in place, on the port it left, with another version: discovery says
 * nothing (the address is the same), so the resolver must notice by itself (the kept connection
 * drops, the new process has another instance id) and judge the new version, both after a crash
 * (SIGKILL: no drain announced) and after a clean stop (SIGTERM).
 */
class PythonRestartInPlaceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closer = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private static Optional<WorkerInfo> info(FleetSnapshot s, WorkerEndpoint e) {
        return s.status(e.url()).flatMap(WorkerStatus::info);
    }

    private static FleetSnapshot answeredBy(WorkerResolver r, ReferenceWorker w) throws Exception {
        return r.await(s -> info(s, w.endpoint()).map(i -> i.instanceId().equals(w.instanceId())).orElse(false)
                && s.status(w.endpoint().url()).orElseThrow().state() != State.PENDING, WAIT);
    }

    @Test
    void aRestartInPlaceWithAnotherVersionIsNoticedAndJudgedAnew() throws Exception {
        int port = WorkerFleet.freeEndpoint().port();
        ReferenceWorker first = closer.add(ReferenceWorker.startOn(Language.PYTHON, port, "1.2.0"));
        WorkerResolver r = closer.add(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .refreshInterval(Duration.ofHours(1)).backoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .fetchSchemas(false).build());
        discovery.push(List.of(first.endpoint()));
        assertThat(r.awaitWorkers(1, WAIT).workers()).extracting(WorkerInfo::version).containsExactly("1.2.0");

        first.kill(); // a crash: nothing announced
        ReferenceWorker second = closer.add(ReferenceWorker.startOn(Language.PYTHON, port, "2.0.0"));
        FleetSnapshot rejected = answeredBy(r, second);
        WorkerStatus status = rejected.status(second.endpoint().url()).orElseThrow();
        assertThat(status.state()).as("%s", status).isEqualTo(State.REJECTED);
        assertThat(status.reason()).contains("'2.0.0'");
        assertThat(status.info().orElseThrow().instanceId()).isNotEqualTo(first.instanceId());
        assertThat(rejected.workers()).isEmpty();

        second.terminate(); // a clean stop: drained first
        assertThat(second.awaitExit(WAIT)).isZero();
        ReferenceWorker third = closer.add(ReferenceWorker.startOn(Language.PYTHON, port, "1.3.0"));
        FleetSnapshot back = answeredBy(r, third);
        assertThat(back.status(third.endpoint().url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
        assertThat(back.workers()).extracting(WorkerInfo::version).containsExactly("1.3.0");
    }
}
