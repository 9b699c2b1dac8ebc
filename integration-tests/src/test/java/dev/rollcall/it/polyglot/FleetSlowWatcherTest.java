package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.polyglot.FleetClientProcess.Client;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A WatchFleet client that never reads (a Python process that opens the stream and stops) does not
 * slow the others: while its stream is stuck on flow control, the Node fleet client follows every
 * change of the fleet, and when the stuck one reads again it gets the newest snapshot after a few
 * messages, not the backlog of every publish it missed (latest wins).
 */
class FleetSlowWatcherTest {

    private static final Logger log = LoggerFactory.getLogger(FleetSlowWatcherTest.class);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SMALL_WORKERS = 10;
    /** Each small worker drained and resumed this many times: 4 changes each, under flap damping's 6. */
    private static final int ROUNDS = 2;
    /** Opens WatchFleet, says so, then reads nothing until a line on standard input. */
    private static final String NEVER_READS = String.join("\n",
            "import sys, grpc",
            "from pathlib import Path",
            "import fleet_client",
            "p = fleet_client.Protocol(Path('rollcall-v1-fleet.protoset'))",
            "channel = grpc.insecure_channel(sys.argv[1])",
            "watch = channel.unary_stream('/rollcall.v1.FleetService/WatchFleet',",
            "                             p.WatchFleetRequest.SerializeToString, p.FleetSnapshot.FromString)",
            "call = watch(p.WatchFleetRequest())",
            "call.initial_metadata()",
            "print('watching', flush=True)",
            "sys.stdin.readline()",
            "for s in call:",
            "    print(f'read {s.number}', flush=True)");
    private static final Pattern READ = Pattern.compile("^read (\\d+)$");

    @AutoClose
    private final Closer closer = new Closer();

    @Test
    void aWatcherThatNeverReadsHoldsBackNeitherTheNodeClientNorTheResolver() throws Exception {
        // Big snapshots: a few of them fill the stuck stream's flow-control windows and buffers.
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            RollcallWorker.Builder big = RollcallWorker.builder().version("1.0.0");
            for (int i = 0; i < 120; i++) {
                big.label("padding-" + i, "x".repeat(1000));
            }
            endpoints.add(closer.add(big.start()).endpoint());
        }
        // Changes spread over several workers: one worker changing this often would be damped for flapping.
        WorkerFleet small = closer.add(WorkerFleet.start(Collections.nCopies(SMALL_WORKERS, "1.0.0").toArray(String[]::new)));
        endpoints.addAll(small.endpoints());
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(endpoints);
        WorkerResolver resolver = closer.add(WorkerResolver.builder().name("serve-slow").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).build());
        resolver.awaitWorkers(endpoints.size(), WAIT);
        FleetServer server = closer.add(FleetServer.builder(resolver).host("127.0.0.1").port(0).http(false).start());
        String target = FleetClientProcess.target(server.grpcAddress());

        FleetClientProcess stuck = closer.add(FleetClientProcess.python("never-reads", NEVER_READS, target));
        await().atMost(WAIT).untilAsserted(() -> assertThat(stuck.printed("watching"::equals))
                .as("%s", stuck.transcript()).isTrue());
        long openedAt = resolver.pin().number();
        FleetClientProcess node = closer.add(FleetClientProcess.watch(Client.NODE, server.grpcAddress()));
        await().atMost(WAIT).until(() -> node.saw(s -> s.compatible().size() == endpoints.size()));

        long last = 0;
        for (int round = 0; round < ROUNDS; round++) {
            for (FleetWorker w : small.workers()) {
                for (boolean listed : List.of(false, true)) {
                    if (listed) {
                        w.resume();
                    } else {
                        w.drain();
                    }
                    String url = w.endpoint().url();
                    long number = resolver.await(s -> s.workers().stream().map(WorkerInfo::endpoint)
                            .anyMatch(e -> e.url().equals(url)) == listed, WAIT).number();
                    await().atMost(WAIT).untilAsserted(() -> assertThat(node.saw(s -> s.number() >= number
                            && s.compatible().containsKey(url) == listed)).as("%s %s (snapshot %s): %s", url,
                            listed ? "resumed" : "drained", number, node.transcript()).isTrue());
                    last = number;
                }
            }
        }
        assertThat(server.watchers()).as("the stuck watcher is still open, the Node one too").isEqualTo(2);
        assertThat(stuck.printed(l -> l.startsWith("read "))).as("it has read nothing").isFalse();

        stuck.command("read");
        long newest = last;
        await().atMost(WAIT).untilAsserted(() -> assertThat(stuck.printed(("read " + newest)::equals))
                .as("%s", stuck.transcript()).isTrue());
        long read = stuck.output().lines().filter(l -> READ.matcher(l).matches()).count();
        log.info("MEASURED the watcher that stopped reading at snapshot {} read {} messages to reach snapshot {}"
                + " ({} published meanwhile)", openedAt, read, newest, newest - openedAt);
        assertThat(read).as("latest wins, not a backlog: %s", stuck.transcript()).isLessThan(newest - openedAt);
        Matcher first = READ.matcher(stuck.output().lines().filter(l -> l.startsWith("read ")).findFirst().orElseThrow());
        assertThat(first.matches()).isTrue();
        assertThat(Long.parseLong(first.group(1))).as("its first message, the snapshot current when it opened")
                .isLessThanOrEqualTo(openedAt);
    }
}
