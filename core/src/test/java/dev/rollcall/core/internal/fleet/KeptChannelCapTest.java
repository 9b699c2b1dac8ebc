package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall.probe.max-kept-channels}: with a cap of 3 and 10 workers, 3 hold a kept channel
 * and its stream, the other 7 are tracked as without kept channels (a connection per probe, the
 * instance-id rule, refreshes), and the snapshot, the counts and one log line say so. Virtual time,
 * fake transport: every link and stream the tracker opens is seen.
 */
class KeptChannelCapTest extends TrackerHarness {

    private final List<WorkerEndpoint> ten = IntStream.rangeClosed(1, 10)
            .mapToObj(i -> WorkerEndpoint.parse("grpc://127.0.0.1:" + (7100 + i))).toList();
    private final PrintStream originalErr = System.err;
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void captureLog() {
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8)); // slf4j-simple writes to it at each call
    }

    @AfterEach
    void restoreLog() {
        System.setErr(originalErr);
        originalErr.print(err.toString(StandardCharsets.UTF_8));
    }

    private void convergeOnTenWithACapOfThree() {
        maxKeptChannels = 3;
        tracker(16);
        candidates(ten.toArray(WorkerEndpoint[]::new));
        for (WorkerEndpoint e : ten) {
            answer(e, "1.0.0", "i-" + e.port());
        }
    }

    /** Links open now, with a WatchWorkerInfo stream on them: the kept channels as the transport sees them. */
    private List<String> streaming() {
        return net.links.stream().filter(l -> !l.closed && l.streaming()).map(l -> l.endpoint.url()).toList();
    }

    private List<String> openLinks() {
        return net.links.stream().filter(l -> !l.closed).map(l -> l.endpoint.url()).toList();
    }

    private static List<String> urls(List<WorkerEndpoint> endpoints) {
        return endpoints.stream().map(WorkerEndpoint::url).toList();
    }

    @Test
    void aCapOfThreeKeepsThreeChannelsAndTracksTheOtherSevenWithout() {
        convergeOnTenWithACapOfThree();

        assertThat(last().counts().compatible()).as("every worker converges").isEqualTo(10);
        assertThat(streaming()).as("the first three probed hold a kept channel and its stream")
                .containsExactlyElementsOf(urls(ten.subList(0, 3)));
        assertThat(openLinks()).as("the other seven's one-off connections are closed after their answers")
                .containsExactlyElementsOf(urls(ten.subList(0, 3)));
        for (WorkerEndpoint e : ten.subList(3, 10)) {
            assertThat(net.sent.stream().filter(p -> p.link().endpoint.equals(e)))
                    .as("%s is probed with the unary call, no stream", e).allMatch(p -> p.listener() == null);
        }
        assertThat(tracker.probes().keptChannels()).isEqualTo(3);
        assertThat(tracker.probes().overKeptCap()).isEqualTo(7);
        assertThat(last().counts().overKeptCap()).as("the snapshot says how many").isEqualTo(7);
        assertThat(last().counts().toString()).contains("7 without a kept channel");
    }

    @Test
    void theCapBeingReachedIsLoggedOnceNamingTheKeyAndTheValue() {
        convergeOnTenWithACapOfThree();
        time.advance(REFRESH); // every worker refreshed: the seven are past the cap again

        String log = err.toString(StandardCharsets.UTF_8);
        List<String> lines = log.lines().filter(l -> l.contains("rollcall.probe.max-kept-channels")).toList();
        assertThat(lines).as("one line, not one per worker or per probe").hasSize(1);
        assertThat(lines.get(0)).contains("WARN").contains("rollcall.probe.max-kept-channels=3")
                .contains(ten.get(3).url());
    }

    @Test
    void workersPastTheCapAreRefreshedOverNewConnectionsAndARestartIsNoticedByItsInstanceId() {
        convergeOnTenWithACapOfThree();
        int linksBefore = net.links.size();
        time.advance(REFRESH);

        List<FakeTransport.Probe> refreshes = new ArrayList<>(net.unanswered());
        assertThat(refreshes).extracting(p -> p.link().endpoint.url()).as("all ten are refreshed")
                .containsExactlyInAnyOrderElementsOf(urls(ten));
        assertThat(net.links.size() - linksBefore).as("a new connection for each of the seven, none for the kept")
                .isEqualTo(7);
        WorkerEndpoint uncapped = ten.get(5);
        for (WorkerEndpoint e : ten) {
            answer(e, "1.0.0", e.equals(uncapped) ? "i-restarted" : "i-" + e.port());
        }

        WorkerStatus status = last().status(uncapped.url()).orElseThrow();
        assertThat(status.state()).isEqualTo(State.COMPATIBLE);
        assertThat(status.info().orElseThrow().instanceId()).as("the new process, from its refresh's answer")
                .isEqualTo("i-restarted");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("worker " + uncapped.url() + " restarted in place");
        assertThat(streaming()).as("still three kept").hasSize(3);
        assertThat(last().counts().overKeptCap()).isEqualTo(7);
    }

    @Test
    void aKeptWorkerThatLeavesFreesItsPlaceForTheNextWorkerProbed() {
        convergeOnTenWithACapOfThree();
        List<WorkerEndpoint> without = new ArrayList<>(ten);
        without.remove(0);
        candidates(without.toArray(WorkerEndpoint[]::new));
        assertThat(tracker.probes().keptChannels()).as("its place is free once its connection is closed").isEqualTo(2);
        assertThat(last().counts().overKeptCap()).isEqualTo(7);

        time.advance(REFRESH);
        net.unanswered().forEach(p -> p.answer("1.0.0", "i-" + p.link().endpoint.port()));
        time.runUntilIdle();

        assertThat(streaming()).as("the first of the seven refreshed is kept from its refresh on")
                .containsExactlyInAnyOrderElementsOf(urls(ten.subList(1, 4)));
        assertThat(tracker.probes().keptChannels()).isEqualTo(3);
        assertThat(tracker.probes().overKeptCap()).isEqualTo(6);
        assertThat(last().counts().overKeptCap()).as("a promotion is published though no worker changed")
                .isEqualTo(6);
    }

    @Test
    void withoutTheCapEveryWorkerKeepsItsChannel() {
        tracker(16); // the harness's cap, above the ten
        candidates(ten.toArray(WorkerEndpoint[]::new));
        for (WorkerEndpoint e : ten) {
            answer(e, "1.0.0", "i-" + e.port());
        }
        assertThat(streaming()).hasSize(10);
        assertThat(last().counts().overKeptCap()).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).doesNotContain("rollcall.probe.max-kept-channels");
    }
}
