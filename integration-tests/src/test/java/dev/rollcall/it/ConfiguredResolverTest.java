package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The path a user takes: a properties file selects a backend and a policy by type, found on the
 * classpath through their service files, against real workers.
 */
class ConfiguredResolverTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private Path properties(String text) throws Exception {
        Path p = dir.resolve("rollcall.properties");
        Files.writeString(p, text);
        return p;
    }

    private void writeAtomically(Path file, String text) throws Exception {
        Path tmp = Files.createTempFile(dir, "workers", ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void customPolicyShippedInItsOwnServiceFileDecidesEndToEnd() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.0.0", "1.0.0", "2.0.0");
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(properties("""
                     rollcall.discovery.type=static
                     rollcall.discovery.static.endpoints=%s
                     rollcall.policy.type=majority
                     rollcall.policy.majority.min-workers=2
                     """.formatted(fleet.endpointList()))))) {
            await().atMost(WAIT).until(() -> resolver.pin().counts().pending() == 0
                    && resolver.pin().counts().candidates() == 3);
            FleetSnapshot s = resolver.pin();
            assertThat(s.policy()).isEqualTo("majority (min-workers 2)");
            assertThat(s.workers()).extracting(WorkerInfo::version).containsExactly("1.0.0", "1.0.0");
            assertThat(s.status(fleet.worker(2).endpoint().url()).orElseThrow().reason())
                    .startsWith("version '2.0.0' is not the majority version '1.0.0'");
        }
    }

    @Test
    void followsAWatchedFileThroughTheSemverPolicy() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "2.0.0", "1.5.1")) {
            String a = fleet.worker(0).endpoint().url();
            String b = fleet.worker(1).endpoint().url();
            String c = fleet.worker(2).endpoint().url();
            Path workers = dir.resolve("workers.txt");
            writeAtomically(workers, "# the fleet\n" + a + "\n" + b + "   # the new major\n");
            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.fromFile(properties("""
                    rollcall.discovery.type=static
                    rollcall.discovery.static.file=%s
                    rollcall.policy.type=semver
                    rollcall.policy.semver.range=^1.4.0
                    rollcall.probe.timeout=1s
                    """.formatted(workers))))) {
                await().atMost(WAIT).until(() -> resolver.pin().counts().pending() == 0
                        && resolver.pin().counts().candidates() == 2);
                assertThat(resolver.workers()).extracting(w -> w.endpoint().url()).containsExactly(a);
                WorkerStatus rejected = resolver.pin().status(b).orElseThrow();
                assertThat(rejected.state()).isEqualTo(WorkerStatus.State.REJECTED);
                assertThat(rejected.reason()).contains("2.0.0").contains("^1.4.0");

                writeAtomically(workers, a + "\n" + b + "\n" + c + "\nnot a url\n");
                await().atMost(WAIT).until(() -> resolver.workers().size() == 2);
                assertThat(resolver.workers()).extracting(WorkerInfo::version).containsExactlyInAnyOrder("1.4.0", "1.5.1");

                writeAtomically(workers, b + "\n" + c + "\n");
                await().atMost(WAIT).until(() -> resolver.pin().status(a).isEmpty());
                assertThat(resolver.workers()).extracting(w -> w.endpoint().url()).containsExactly(c);
            }
        }
    }

    @Test
    void badRangeFailsAtStartUpNamingTheKey() throws Exception {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", ">=banana"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.policy.semver.range")
                .hasMessageContaining("banana");
    }

    @Test
    void badEndpointInConfigFailsAtStartUpNamingTheKeyAndItem() {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001,grpc://127.0.0.1",
                "rollcall.policy.type", "exact",
                "rollcall.policy.exact.version", "1.0.0"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.static.endpoints")
                .hasMessageContaining("grpc://127.0.0.1");
    }

    @Test
    void unknownTypeListsTheTypesOnTheClasspath() {
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "staitc",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.type='staitc'")
                .hasMessageContaining("did you mean 'static'")
                .hasMessageContaining("rollcall-discovery-static");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001",
                "rollcall.policy.type", "newest"))))
                .hasMessageContaining("rollcall.policy.type='newest'")
                .satisfies(e -> assertThat(e.getMessage()).contains("exact (", "semver (", "majority ("));
    }

    @Test
    void exactPolicyAcceptsAListOfVersions() throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.1", "1.4.2");
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                     "rollcall.discovery.type", "static",
                     "rollcall.discovery.static.endpoints", fleet.endpointList(),
                     "rollcall.policy.type", "exact",
                     "rollcall.policy.exact.versions", "1.4.0, 1.4.2")))) {
            await().atMost(WAIT).until(() -> resolver.pin().counts().pending() == 0
                    && resolver.pin().counts().candidates() == 3);
            assertThat(resolver.workers()).extracting(WorkerInfo::version).containsExactly(
                    List.of(fleet.worker(0), fleet.worker(2)).stream()
                            .sorted(java.util.Comparator.comparing(w -> w.endpoint().url()))
                            .map(w -> w.version()).toArray(String[]::new));
        }
    }
}
