package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.UnresponsiveWorker;
import dev.rollcall.local.WorkerFleet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Workers that fail while being probed, over real gRPC on loopback: killed mid-probe, answering
 * around the deadline, and a large fleet with a tenth of it unreachable. In each case the
 * failing worker is left out with a reason and every other worker is served.
 */
class ProbeFaultsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    private WorkerResolver resolver(WorkerResolver.Builder b) {
        return closing(b.discovery(discovery).policy(SemverRangePolicy.of("^1.0")).build());
    }

    private static WorkerStatus status(WorkerResolver r, WorkerEndpoint e) {
        return r.pin().status(e.url()).orElse(null);
    }

    private static State state(WorkerResolver r, WorkerEndpoint e) {
        WorkerStatus s = status(r, e);
        return s == null ? null : s.state();
    }

    // ---------------------------------------------------------------- around the deadline

    @Test
    void answerWellInsideTheDeadlineIsAccepted() throws Exception {
        ScriptedWorker slow = closing(ScriptedWorker.answeringAfter(300, "1.0.0"));
        // Every answer takes 300 ms: were the deadline shorter than 1 s, no retry could ever succeed.
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofSeconds(1))
                .backoff(Duration.ofMillis(200), Duration.ofSeconds(1)));
        discovery.push(List.of(slow.endpoint()));

        FleetSnapshot s = r.awaitWorkers(1, WAIT);

        assertThat(s.compatibleEndpoints()).containsExactly(slow.endpoint());
    }

    @Test
    void answerPastTheDeadlineLeavesTheWorkerOutEvenWhenItArrivesLater() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        ScriptedWorker late = closing(ScriptedWorker.answeringAfter(3_000, "1.0.0"));
        // Retries are quick: a cold JVM's first probe of the real worker may itself miss 1 s.
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofSeconds(1))
                .backoff(Duration.ofMillis(200), Duration.ofSeconds(1)));
        List<FleetSnapshot> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        closing(r.addListener(seen::add)::close);
        List<WorkerEndpoint> candidates = new ArrayList<>(fleet.endpoints());
        candidates.add(late.endpoint());
        discovery.push(candidates);

        r.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> state(r, late.endpoint()) == State.UNREACHABLE);
        assertThat(status(r, late.endpoint()).reason()).isEqualTo("DEADLINE_EXCEEDED: no answer within 1000 ms");
        assertThat(r.workers()).extracting(w -> w.endpoint().url()).containsExactly(fleet.worker(0).endpoint().url());

        // The answer the worker sends after the deadline lands on a cancelled call: it changes nothing.
        await().atMost(WAIT).until(() -> late.delayedAnswers() >= 1);
        FleetSnapshot last = r.pin();
        assertThat(last.status(late.endpoint().url()).orElseThrow().state()).isEqualTo(State.UNREACHABLE);
        assertThat(seen).noneMatch(s -> s.compatibleEndpoints().contains(late.endpoint()));
        assertThat(last.workers()).hasSize(1);
    }

    // ---------------------------------------------------------------- killed mid-probe

    @Test
    void workerKilledWithSigkillMidProbeIsExcludedAndProbedAgainWhenItComesBack() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        Process child = startHangingWorker();
        closing(child::destroyForcibly);
        BlockingQueue<String> lines = linesOf(child);
        String listening = lines.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(listening).as("the child's first line (its log is under target/)").startsWith("LISTENING ");
        WorkerEndpoint doomed = WorkerEndpoint.of("127.0.0.1", Integer.parseInt(listening.substring(10).trim()));
        // A deadline far beyond the test: only the kill can end this probe.
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofMinutes(5))
                .backoff(Duration.ofMillis(200), Duration.ofSeconds(1)));
        List<WorkerEndpoint> candidates = new ArrayList<>(fleet.endpoints());
        candidates.add(doomed);
        discovery.push(candidates);
        assertThat(lines.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("PROBED");
        assertThat(state(r, doomed)).isEqualTo(State.PENDING);

        child.destroyForcibly(); // SIGKILL on Linux: no goodbye on the connection
        assertThat(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

        await().atMost(WAIT).until(() -> state(r, doomed) == State.UNREACHABLE);
        assertThat(status(r, doomed).reason()).startsWith("UNAVAILABLE");
        assertThat(r.workers()).extracting(w -> w.endpoint().url()).containsExactly(fleet.worker(0).endpoint().url());

        FleetWorker back = fleet.workerOn(doomed, "1.2.0");
        FleetSnapshot s = r.awaitWorkers(2, WAIT);
        assertThat(s.version(doomed.url())).contains("1.2.0");
        assertThat(back.probeCount()).isGreaterThanOrEqualTo(1);
    }

    private static Process startHangingWorker() throws IOException {
        Path log = Path.of("target", "hanging-worker-" + ProcessHandle.current().pid() + ".log");
        Files.createDirectories(log.getParent());
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HangingWorkerProcess.class.getName())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }

    private static BlockingQueue<String> linesOf(Process child) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // The child died; nothing more to read.
            }
        }, "test-child-stdout");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    // Flapping (backoff that keeps growing while a worker drops right after answering, and no
    // snapshot storm) is checked in virtual time by core's FleetTrackerTest.

    // ---------------------------------------------------------------- a tenth of a large fleet down

    @Test
    void tenPercentOfFiveHundredUnreachableAreExcludedWithoutHoldingUpTheOthers() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start());
        for (int i = 0; i < 450; i++) {
            fleet.addWorker("1.0.0");
        }
        List<UnresponsiveWorker> hung = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            hung.add(fleet.addUnresponsive());
        }
        // Distinct, and none a port of the fleet: a port found free can be found free again (the
        // kernel hands it out anew); a duplicate once made this fleet 499 candidates, and the test
        // waited for a 50th unreachable one that could not come.
        java.util.Set<WorkerEndpoint> distinct = new java.util.LinkedHashSet<>();
        while (distinct.size() < 25) {
            WorkerEndpoint free = WorkerFleet.freeEndpoint();
            if (fleet.endpoints().stream().noneMatch(e -> e.port() == free.port())) {
                distinct.add(free);
            }
        }
        List<WorkerEndpoint> refusing = new ArrayList<>(distinct);
        // The hung ones' deadline is long enough for the 450 to be probed first on a busy machine.
        WorkerResolver r = resolver(WorkerResolver.builder().probeTimeout(Duration.ofSeconds(12))
                .backoff(Duration.ofMinutes(5), Duration.ofMinutes(5)));
        List<WorkerEndpoint> candidates = new ArrayList<>(fleet.endpoints());
        candidates.addAll(refusing);
        assertThat(new java.util.HashSet<>(candidates)).hasSize(500);
        discovery.push(candidates);

        FleetSnapshot served = r.awaitWorkers(450, Duration.ofSeconds(60));
        // The hung ones still hold their probe slots: the 450 did not wait for their deadline.
        assertThat(hung).allSatisfy(h -> assertThat(served.status(h.endpoint().url()).orElseThrow().state())
                .isEqualTo(State.PENDING));

        await().atMost(Duration.ofSeconds(60)).until(() -> r.pin().counts().unreachable() == 50);
        FleetSnapshot s = r.pin();
        assertThat(s.counts().compatible()).isEqualTo(450);
        assertThat(refusing).allSatisfy(e -> assertThat(s.status(e.url()).orElseThrow().reason())
                .startsWith("UNAVAILABLE").contains("onnection refused"));
        assertThat(hung).allSatisfy(h -> assertThat(s.status(h.endpoint().url()).orElseThrow().reason())
                .isEqualTo("DEADLINE_EXCEEDED: no answer within 12000 ms"));
        assertThat(r.probesSent()).isEqualTo(500);
    }
}
