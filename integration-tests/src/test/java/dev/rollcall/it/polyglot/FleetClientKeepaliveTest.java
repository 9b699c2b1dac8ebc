package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.faults.FaultProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A fleet service whose host goes silent under its watchers (packets dropped, sockets open, no FIN,
 * no RST): the Python and the Node fleet clients, real processes, follow a {@link FleetServer}
 * through a {@link FaultProxy} with keepalive pings every 5 s and 2 s for the answer. Blackholed,
 * the unanswered ping fails their watch with {@code UNAVAILABLE}; they say they lost the service and
 * reconnect with their backoff, and once the network passes again they print the snapshot published
 * meanwhile. A Python query's hold through the same network learns the same way that it ended.
 * Without their pings they would wait on the dead streams until the kernel gave up.
 */
class FleetClientKeepaliveTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The shortest keepalive the clients accept: the service permits a client's ping every 5 s. */
    private static final String[] KEEPALIVE = {"--keepalive-seconds", "5", "--keepalive-timeout-seconds", "2"};

    @AutoClose
    private final Closer closer = new Closer();

    @Test
    void bothClientsNoticeASilentServiceByTheirPingsAndFollowItWhenItAnswersAgain() throws Exception {
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.0.0", "1.0.0"));
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(fleet.endpoints());
        WorkerResolver resolver = closer.add(WorkerResolver.builder().name("serve-keepalive").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).build());
        resolver.awaitWorkers(2, WAIT);
        FleetServer server = closer.add(FleetServer.builder(resolver).host("127.0.0.1").port(0).http(false).start());
        FaultProxy network = closer.add(FaultProxy.to(server.grpcAddress()));
        InetSocketAddress service = new InetSocketAddress("127.0.0.1", network.port());
        List<FleetClientProcess> clients = new ArrayList<>();
        for (Client c : Client.values()) {
            clients.add(closer.add(FleetClientProcess.watch(c, service, KEEPALIVE)));
        }
        List<String> query = new ArrayList<>(List.of("query", "--target", FleetClientProcess.target(service)));
        query.addAll(List.of(KEEPALIVE));
        FleetClientProcess holder = closer.add(FleetClientProcess.start(Client.PYTHON, query.toArray(String[]::new)));
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.compatible().size() == 2))
                    .as("%s", c.transcript()).isTrue());
        }
        await().atMost(WAIT).untilAsserted(() -> assertThat(holder.printed(l -> l.startsWith("query running on snapshot")))
                .as("%s", holder.transcript()).isTrue());
        // A first connection slow to answer may already have been reported; only losses after the blackhole count.
        String lost = "watch: lost the service at " + FleetClientProcess.target(service) + " (UNAVAILABLE";
        Map<FleetClientProcess, Long> lostBefore = new HashMap<>();
        clients.forEach(c -> lostBefore.put(c, c.errors().lines().filter(l -> l.startsWith(lost)).count()));

        network.blackhole();
        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.errors().lines().filter(l -> l.startsWith(lost)).count())
                    .as("the silent service is noticed: %s", c.transcript()).isGreaterThan(lostBefore.get(c)));
        }
        assertThat(holder.awaitExit(WAIT)).as("a query whose hold went silent fails: %s", holder.transcript()).isEqualTo(1);
        assertThat(holder.errors()).contains("ended early (UNAVAILABLE");
        fleet.add("1.0.0");
        discovery.push(fleet.endpoints());
        long published = resolver.await(s -> s.workers().size() == 3, WAIT).number();
        network.pass();

        for (FleetClientProcess c : clients) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(c.saw(s -> s.number() >= published
                    && s.compatible().size() == 3)).as("%s", c.transcript()).isTrue());
            assertThat(c.saidOnStderr(l -> l.startsWith("watch: reconnected to " + FleetClientProcess.target(service))))
                    .as("the reconnection is said: %s", c.transcript()).isTrue();
        }
    }

    @Test
    void bothClientsRefuseAKeepaliveMoreFrequentThanTheServicePermits() {
        InetSocketAddress nowhere = new InetSocketAddress("127.0.0.1", 9);
        for (Client c : Client.values()) {
            FleetClientProcess refused = closer.add(FleetClientProcess.watch(c, nowhere, "--keepalive-seconds", "4"));
            assertThat(refused.awaitExit(WAIT)).as("a usage error: %s", refused.transcript()).isEqualTo(2);
            assertThat(refused.errors()).as("names the option, the value and the service's limit")
                    .contains("--keepalive-seconds", "4", "5 s", "too_many_pings");
        }
    }
}
