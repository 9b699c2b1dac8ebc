package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Capabilities;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.testkit.Closer;
import dev.rollcall.worker.RollcallWorker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python and the Node fleet clients (examples/clients) with {@code --require}, each a real
 * process following {@code rollcall serve} (a process of its own): they list only the workers that
 * have what the query requires and print each other one with what it lacks; a worker that drops the
 * capability (pushed) leaves the next snapshot they print; a hold with it is narrowed; a malformed
 * requirement ends the client with the service's refusal naming it.
 */
class FleetClientsRequirementsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String GEO = "udf:geo_distance";

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;

    private RollcallWorker worker(String... capabilities) throws Exception {
        return closer.add(RollcallWorker.builder().version("1.0.0").capabilities(capabilities).start());
    }

    @Test
    void pythonAndNodeWithARequirementListOnlyTheWorkersThatHaveItAndSeeOneThatDropsItLeftOut() throws Exception {
        RollcallWorker geo = worker(GEO);
        RollcallWorker geo2 = worker(GEO, "plan-protocol=3");
        RollcallWorker plain = worker();
        Path workers = Files.write(dir.resolve("workers.txt"), List.of(geo.endpoint().url(), geo2.endpoint().url(),
                plain.endpoint().url()));
        RollcallServeProcess serve = closer.add(RollcallServeProcess.start(dir.resolve("rollcall.properties"),
                List.of("rollcall.discovery.type=static", "rollcall.discovery.static.file=" + workers,
                        "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0"), 0));
        List<FleetClientProcess> clients = List.of(
                closer.add(FleetClientProcess.watch(Client.PYTHON, serve.grpcAddress(), "--require", GEO)),
                closer.add(FleetClientProcess.watch(Client.NODE, serve.grpcAddress(), "--require", GEO)));
        String plainLeftOut = "left out " + plain.endpoint().url() + " 1.0.0: lacks udf:geo_distance";
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.compatible().keySet()
                    .equals(Set.of(geo.endpoint().url(), geo2.endpoint().url())))).as("%s", c.transcript()).isTrue());
            assertThat(c.printed(plainLeftOut::equals)).as("%s", c.transcript()).isTrue();
        }

        geo2.capabilities(Capabilities.of("plan-protocol=3")); // drops the UDF, pushed on its watch stream
        String geo2LeftOut = "left out " + geo2.endpoint().url() + " 1.0.0: lacks udf:geo_distance";
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.last().compatible())
                    .as("%s", c.transcript()).isEqualTo(Map.of(geo.endpoint().url(), "1.0.0")));
            assertThat(c.printed(geo2LeftOut::equals)).as("%s", c.transcript()).isTrue();
            assertThat(c.seen()).as("no snapshot lists the worker without it: %s", c.transcript())
                    .allSatisfy(s -> assertThat(s.compatible()).doesNotContainKey(plain.endpoint().url()));
        }

        FleetClientProcess query = closer.add(FleetClientProcess.start(Client.PYTHON, "query", "--target",
                FleetClientProcess.target(serve.grpcAddress()), "--require", GEO + ",plan-protocol>=3"));
        await().atMost(WAIT).untilAsserted(() -> assertThat(query.printed(l -> l.startsWith("query running on")))
                .as("%s", query.transcript()).isTrue());
        assertThat(query.printed(l -> l.matches("held snapshot \\d+ of \\S+ with 0 workers")))
                .as("no worker has both any more: %s", query.transcript()).isTrue();
        query.command("end");
        assertThat(query.awaitExit(WAIT)).as("%s", query.transcript()).isZero();

        FleetClientProcess refused = closer.add(FleetClientProcess.start(Client.PYTHON, "get", "--target",
                FleetClientProcess.target(serve.grpcAddress()), "--require", "plan-protocol>=banana"));
        assertThat(refused.awaitExit(WAIT)).as("%s", refused.transcript()).isEqualTo(2);
        assertThat(refused.saidOnStderr(l -> l.contains("INVALID_ARGUMENT")
                && l.contains("requirement 'plan-protocol>=banana'"))).as("%s", refused.transcript()).isTrue();
    }
}
