package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Selection;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.Closer;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Events and the selection report, from a real resolver over real workers. */
class FleetEventsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Newest 1.x version wins, all others rejected: a cohort policy in a few lines. */
    private static final VersionPolicy NEWEST_ONE_X = new VersionPolicy() {
        @Override
        public Verdict check(WorkerInfo worker) {
            return worker.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x");
        }

        @Override
        public Selection select(List<WorkerInfo> probed) {
            Optional<String> newest = probed.stream().map(WorkerInfo::version).filter(v -> v.startsWith("1."))
                    .max(Comparator.naturalOrder());
            List<WorkerInfo> accepted = new ArrayList<>();
            List<Selection.Rejection> rejected = new ArrayList<>();
            for (WorkerInfo w : probed) {
                if (newest.isPresent() && w.version().equals(newest.get())) {
                    accepted.add(w);
                } else {
                    rejected.add(new Selection.Rejection(w, newest.map(n -> "not the newest 1.x, " + n)
                            .orElse("not 1.x")));
                }
            }
            return new Selection(accepted, rejected, newest, newest.map(n -> n + " is the newest 1.x").orElse(""));
        }

        @Override
        public String description() {
            return "newest 1.x";
        }
    };

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    @Test
    void subscribersHearWorkersJoinLeaveAndGetRejectedAndTheCohortSwitch() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0", "2.0.0"));
        WorkerResolver resolver = closing(WorkerResolver.builder().discovery(discovery).policy(NEWEST_ONE_X)
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build());
        List<FleetEvent> events = new CopyOnWriteArrayList<>();
        closing(resolver.addEventListener(events::add));

        discovery.push(fleet.endpoints());
        FleetSnapshot first = resolver.await(s -> s.counts().pending() == 0 && s.counts().candidates() == 3, WAIT);
        await().atMost(WAIT).until(() -> events.stream().filter(e -> e instanceof FleetEvent.WorkerJoined).count() == 2);
        assertThat(events).filteredOn(e -> e instanceof FleetEvent.WorkerRejected).singleElement()
                .satisfies(e -> assertThat(((FleetEvent.WorkerRejected) e).worker().version()).isEqualTo("2.0.0"));
        assertThat(events).filteredOn(e -> e instanceof FleetEvent.CohortSwitched).singleElement()
                .isEqualTo(new FleetEvent.CohortSwitched(((FleetEvent.CohortSwitched) events.stream()
                        .filter(e -> e instanceof FleetEvent.CohortSwitched).findFirst().orElseThrow()).snapshot(),
                        Optional.empty(), Optional.of("1.0.0"), "1.0.0 is the newest 1.x"));
        assertThat(first.selection().cohort()).hasValue("1.0.0");
        assertThat(first.selection().cohorts()).containsEntry("1.0.0", 2).containsEntry("2.0.0", 1);
        assertThat(first.selection().excluded()).singleElement()
                .satisfies(s -> assertThat(s.reason()).isEqualTo("not the newest 1.x, 1.0.0"));
        assertThat(first.selection().summary()).isEqualTo("policy newest 1.x: chose 1.0.0 (1.0.0 is the newest 1.x); "
                + "cohorts 1.0.0 x2, 2.0.0 x1; excluded 1");

        events.clear();
        FleetWorker upgraded = fleet.worker(0);
        upgraded.restart("1.1.0");
        resolver.await(s -> s.selection().cohort().equals(Optional.of("1.1.0")) && s.counts().pending() == 0, WAIT);
        await().atMost(WAIT).until(() -> events.stream().anyMatch(e -> e instanceof FleetEvent.WorkerJoined j
                && j.worker().version().equals("1.1.0")));
        assertThat(events).filteredOn(e -> e instanceof FleetEvent.CohortSwitched)
                .extracting(e -> ((FleetEvent.CohortSwitched) e).to()).last().isEqualTo(Optional.of("1.1.0"));
        assertThat(events).anySatisfy(e -> assertThat(e).isInstanceOfSatisfying(FleetEvent.WorkerLeft.class,
                left -> assertThat(left.endpoint()).isEqualTo(fleet.worker(1).endpoint())));

        events.clear();
        discovery.push(List.of(fleet.worker(1).endpoint(), fleet.worker(2).endpoint()));
        resolver.await(s -> s.counts().candidates() == 2 && s.counts().pending() == 0, WAIT);
        await().atMost(WAIT).until(() -> events.stream().anyMatch(e -> e instanceof FleetEvent.WorkerLeft l
                && l.endpoint().equals(upgraded.endpoint()) && l.reason().equals("left discovery")));
    }

    @Test
    void resolverRunsWithoutMicrometerOnTheClasspath(@TempDir Path dir) throws Exception {
        // This module's class path has Micrometer (rollcall-server brings it): the resolver runs in a
        // JVM of its own, on the same class path without it, and without the jars whose manifest names
        // more jars (in a reactor build the cli's names its lib/, Micrometer included).
        String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.contains("micrometer") && !namesMoreJars(entry))
                .collect(Collectors.joining(File.pathSeparator));
        Path output = dir.resolve("output.txt");
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        Process coordinator = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath, ResolverWithoutMicrometer.class.getName(), fleet.endpointList())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        closing(coordinator::destroyForcibly);
        assertThat(coordinator.waitFor(60, TimeUnit.SECONDS)).as("the coordinator ended").isTrue();
        String said = Files.readString(output);
        assertThat(coordinator.exitValue()).as("exit code; output:%n%s", said).isZero();
        assertThat(said).contains("no micrometer, 1 workers");
    }

    /** Whether {@code entry} is a jar whose manifest adds a {@code Class-Path} of its own. */
    private static boolean namesMoreJars(String entry) {
        if (!entry.endsWith(".jar")) {
            return false;
        }
        try (JarFile jar = new JarFile(entry)) {
            Manifest manifest = jar.getManifest();
            return manifest != null && manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH) != null;
        } catch (IOException e) {
            return false;
        }
    }
}
