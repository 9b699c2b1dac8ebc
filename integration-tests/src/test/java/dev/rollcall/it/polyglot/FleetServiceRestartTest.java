package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.it.polyglot.FleetClientProcess.Seen;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.Closer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall serve} restarted under its clients: the process stopped with SIGTERM, a new one
 * started on the same port over a workers file that meanwhile lists one more worker. The Python and
 * the Node fleet clients, real processes, say that they lost it, reconnect on their own with backoff
 * and print the new service's snapshots (its new {@code service_instance_id}, its numbers), the new
 * worker included. How long reconnecting took is measured and logged, not asserted.
 */
class FleetServiceRestartTest {

    private static final Logger log = LoggerFactory.getLogger(FleetServiceRestartTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    private final Closer closer = new Closer();
    @TempDir
    Path dir;

    private List<String> config(Path workers) {
        return List.of("rollcall.discovery.type=static", "rollcall.discovery.static.file=" + workers,
                "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0", "rollcall.serve.host=127.0.0.1");
    }

    private static void writeWorkers(Path file, WorkerFleet fleet) throws IOException {
        Files.write(file, fleet.endpoints().stream().map(WorkerEndpoint::url).toList());
    }

    @Test
    void bothClientsReconnectToTheRestartedServeAndFollowItUnderItsNewInstanceId() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0"));
        Path workers = dir.resolve("workers.txt");
        writeWorkers(workers, fleet);
        RollcallServeProcess first = closer.add(RollcallServeProcess.start(dir.resolve("first.properties"),
                config(workers), 0));
        int port = first.grpcAddress().getPort();
        FleetClientProcess python = closer.add(FleetClientProcess.watch(Client.PYTHON, first.grpcAddress()));
        FleetClientProcess node = closer.add(FleetClientProcess.watch(Client.NODE, first.grpcAddress()));
        List<FleetClientProcess> clients = List.of(python, node);
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.compatible().size() == 2))
                    .as("%s", c.transcript()).isTrue());
        }
        String firstInstance = python.last().instance();
        assertThat(node.last().instance()).as("one service").isEqualTo(firstInstance);

        long stopped = System.nanoTime();
        assertThat(first.stop(WAIT)).as("rollcall serve's exit code after SIGTERM:%n%s", first.output()).isZero();
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saidOnStderr(l -> l.startsWith("watch: lost the service")))
                    .as("%s", c.transcript()).isTrue());
        }
        fleet.add("1.0.0"); // the new service's fleet differs: what the clients print comes from it
        writeWorkers(workers, fleet);
        // The port was just freed; another bind may still hold it for a moment.
        AtomicReference<RollcallServeProcess> restarted = new AtomicReference<>();
        await().atMost(WAIT).ignoreException(IllegalStateException.class).until(() -> {
            restarted.set(closer.add(RollcallServeProcess.start(dir.resolve("second.properties"), config(workers), port)));
            return true;
        });
        long started = System.nanoTime();

        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> !s.instance().equals(firstInstance)
                    && s.compatible().size() == 3)).as("%s", c.transcript()).isTrue());
            Seen resynced = c.seen().stream().filter(s -> !s.instance().equals(firstInstance)).findFirst().orElseThrow();
            assertThat(c.saidOnStderr(l -> l.startsWith("watch: reconnected to ")))
                    .as("the reconnection is said: %s", c.transcript()).isTrue();
            assertThat(c.saidOnStderr(l -> l.startsWith("watch: a new service instance " + resynced.instance())))
                    .as("the new instance is said: %s", c.transcript()).isTrue();
            log.info("MEASURED {}: rollcall serve stopped -> first snapshot of the new one: {} ms;"
                    + " the new one listening -> seen: {} ms", c, TimeUnit.NANOSECONDS.toMillis(resynced.seenAtNanos() - stopped),
                    TimeUnit.NANOSECONDS.toMillis(resynced.seenAtNanos() - started));
        }
        assertThat(python.seen().get(python.seen().size() - 1).instance()).isEqualTo(node.last().instance());
    }
}
