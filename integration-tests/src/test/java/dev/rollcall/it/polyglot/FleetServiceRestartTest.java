package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.it.polyglot.FleetClientProcess.Seen;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet service restarted under its clients: the server and its resolver closed, new ones
 * started on the same port. The Python and the Node fleet clients, real processes, say that they
 * lost it, reconnect on their own with backoff and print the new service's snapshots (its new
 * {@code service_instance_id}, numbers starting again), the new fleet's workers included. How long
 * reconnecting took is measured and logged, not asserted.
 */
class FleetServiceRestartTest {

    private static final Logger log = LoggerFactory.getLogger(FleetServiceRestartTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closer = new Closer();
    private final WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0"));

    private WorkerResolver resolver(String name) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(fleet.endpoints());
        WorkerResolver r = WorkerResolver.builder().name(name).discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .fetchSchemas(false).build();
        r.awaitWorkers(fleet.endpoints().size(), WAIT);
        return r;
    }

    @Test
    void bothClientsReconnectAndFollowTheRestartedServiceUnderItsNewInstanceId() throws Exception {
        WorkerResolver firstResolver = closer.add(resolver("serve-before"));
        FleetServer first = closer.add(FleetServer.builder(firstResolver).host("127.0.0.1").port(0).http(false).start());
        int port = first.grpcAddress().getPort();
        FleetClientProcess python = closer.add(FleetClientProcess.watch(Client.PYTHON, first.grpcAddress()));
        FleetClientProcess node = closer.add(FleetClientProcess.watch(Client.NODE, first.grpcAddress()));
        List<FleetClientProcess> clients = List.of(python, node);
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.instance().equals(first.instanceId())
                    && s.compatible().size() == 2)).as("%s", c.transcript()).isTrue());
        }

        long stopped = System.nanoTime();
        first.close();
        firstResolver.close();
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saidOnStderr(l -> l.startsWith("watch: lost the service")))
                    .as("%s", c.transcript()).isTrue());
        }
        fleet.add("1.0.0"); // the new service's fleet differs: what the clients print comes from it
        WorkerResolver secondResolver = closer.add(resolver("serve-after"));
        // The port was just freed; another bind may still hold it for a moment.
        AtomicReference<FleetServer> restarted = new AtomicReference<>();
        await().atMost(WAIT).ignoreException(IOException.class).until(() -> {
            restarted.set(closer.add(FleetServer.builder(secondResolver).host("127.0.0.1").port(port).http(false).start()));
            return true;
        });
        FleetServer second = restarted.get();
        long started = System.nanoTime();
        assertThat(second.instanceId()).isNotEqualTo(first.instanceId());

        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.instance().equals(second.instanceId())
                    && s.compatible().size() == 3)).as("%s", c.transcript()).isTrue());
            Seen resynced = c.seen().stream().filter(s -> s.instance().equals(second.instanceId())).findFirst()
                    .orElseThrow();
            assertThat(c.saidOnStderr(l -> l.startsWith("watch: reconnected to ")))
                    .as("the reconnection is said: %s", c.transcript()).isTrue();
            assertThat(c.saidOnStderr(l -> l.startsWith("watch: a new service instance " + second.instanceId())))
                    .as("the new instance is said: %s", c.transcript()).isTrue();
            assertThat(c.isAlive()).isTrue();
            log.info("MEASURED {}: service closed -> first snapshot of the new one: {} ms; new one started -> seen: {} ms",
                    c, TimeUnit.NANOSECONDS.toMillis(resynced.seenAtNanos() - stopped),
                    TimeUnit.NANOSECONDS.toMillis(resynced.seenAtNanos() - started));
        }
    }
}
