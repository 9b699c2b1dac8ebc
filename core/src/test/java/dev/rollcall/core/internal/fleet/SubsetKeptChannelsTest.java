package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.probe.FakeTransport;
import dev.rollcall.core.internal.settings.SubsetSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall.subset.size=3} over 10 workers: only the workers of top rank hold a kept channel
 * and its stream, from their first probe on; the other seven are probed over a connection of their
 * own each time. A member rejected, failing or gone is demoted at once (its channel closed) and the
 * next in rank promoted (probed again, keeping its channel). Virtual time, fake transport.
 */
class SubsetKeptChannelsTest extends TrackerHarness {

    private static final String ID = "coordinator-1";
    private final List<WorkerEndpoint> ten = IntStream.rangeClosed(1, 10)
            .mapToObj(i -> WorkerEndpoint.parse("grpc://127.0.0.1:" + (7100 + i))).toList();
    /** The ten by rendezvous weight on {@link #ID}, highest first. */
    private final List<WorkerEndpoint> byRank = ranked();

    private List<WorkerEndpoint> ranked() {
        List<WorkerEndpoint> r = new ArrayList<>(ten);
        r.sort((x, y) -> Long.compareUnsigned(KeyRouting.weight(ID, y.url()), KeyRouting.weight(ID, x.url())));
        return r;
    }

    private void convergeOnTenWithASubsetOfThree() {
        subset = new SubsetSettings(3, ID);
        tracker(16);
        candidates(ten.toArray(WorkerEndpoint[]::new));
        for (WorkerEndpoint e : ten) {
            answer(e, "1.0.0", "i-" + e.port());
        }
    }

    private List<String> streaming() {
        return net.links.stream().filter(l -> !l.closed && l.streaming()).map(l -> l.endpoint.url()).toList();
    }

    private List<String> openLinks() {
        return net.links.stream().filter(l -> !l.closed).map(l -> l.endpoint.url()).toList();
    }

    private List<String> compatible() {
        return last().workers().stream().map(w -> w.endpoint().url()).toList();
    }

    private FakeTransport.FakeLink keptLinkOf(WorkerEndpoint e) {
        return net.links.stream().filter(l -> !l.closed && l.endpoint.equals(e)).findFirst().orElseThrow();
    }

    private static List<String> urls(List<WorkerEndpoint> endpoints) {
        return endpoints.stream().map(WorkerEndpoint::url).toList();
    }

    @Test
    void theThreeOfTopRankKeepAChannelFromTheirFirstProbeAndTheOtherSevenAreOutsideTheSubset() {
        convergeOnTenWithASubsetOfThree();

        assertThat(compatible()).containsExactlyInAnyOrderElementsOf(urls(byRank.subList(0, 3)));
        for (WorkerEndpoint e : byRank.subList(3, 10)) {
            assertThat(state(e)).as("%s", e).isEqualTo(State.OUTSIDE_SUBSET);
            assertThat(net.sent.stream().filter(p -> p.link().endpoint.equals(e)))
                    .as("%s is probed with the unary call, no stream", e).allMatch(p -> p.listener() == null);
        }
        assertThat(streaming()).containsExactlyInAnyOrderElementsOf(urls(byRank.subList(0, 3)));
        assertThat(openLinks()).as("the seven one-off connections are closed")
                .containsExactlyInAnyOrderElementsOf(urls(byRank.subList(0, 3)));
        assertThat(net.links).as("one link each: the three kept were streaming from their first probe").hasSize(10);
        assertThat(last().counts().outsideSubset()).isEqualTo(7);
        assertThat(last().counts().overKeptCap()).as("outside the subset is not past the cap").isZero();
        assertThat(tracker.probes().keptChannels()).isEqualTo(3);
    }

    @Test
    void aMemberRejectedByItsPushIsDemotedAndTheNextInRankPromotedWithAKeptChannel() {
        convergeOnTenWithASubsetOfThree();
        WorkerEndpoint first = byRank.get(0);
        WorkerEndpoint fourth = byRank.get(3);

        keptLinkOf(first).push("2.0.0", "i-" + first.port(), Map.of(), ServingState.SERVING);
        time.runUntilIdle();
        assertThat(state(first)).isEqualTo(State.REJECTED);
        assertThat(compatible()).as("the fourth enters the subset at once")
                .containsExactlyInAnyOrderElementsOf(urls(byRank.subList(1, 4)));
        answer(fourth, "1.0.0", "i-" + fourth.port()); // the promotion's probe: a stream this time

        assertThat(streaming()).containsExactlyInAnyOrderElementsOf(urls(byRank.subList(1, 4)));
        assertThat(openLinks()).as("the rejected one's kept channel is closed")
                .containsExactlyInAnyOrderElementsOf(urls(byRank.subList(1, 4)));
        assertThat(tracker.probes().keptChannels()).isEqualTo(3);
        assertThat(last().counts().outsideSubset()).isEqualTo(6);
    }

    @Test
    void aMemberThatLeavesDiscoveryHandsItsPlaceToTheNextInRank() {
        convergeOnTenWithASubsetOfThree();
        List<WorkerEndpoint> without = new ArrayList<>(ten);
        without.remove(byRank.get(1));
        candidates(without.toArray(WorkerEndpoint[]::new));
        answer(byRank.get(3), "1.0.0", "i-" + byRank.get(3).port());

        assertThat(compatible()).containsExactlyInAnyOrder(byRank.get(0).url(), byRank.get(2).url(),
                byRank.get(3).url());
        assertThat(streaming()).containsExactlyInAnyOrder(byRank.get(0).url(), byRank.get(2).url(),
                byRank.get(3).url());
    }

    @Test
    void aFailingMemberIsOutAndTheNextTakesItsPlaceUntilItIsBackAndOfTopRankAgain() {
        convergeOnTenWithASubsetOfThree();
        WorkerEndpoint first = byRank.get(0);
        keptLinkOf(first).drop();
        time.runUntilIdle();
        fail(first); // its probe over a new connection fails: unreachable, not eligible
        answer(byRank.get(3), "1.0.0", "i-" + byRank.get(3).port());

        assertThat(state(first)).isEqualTo(State.UNREACHABLE);
        assertThat(compatible()).containsExactlyInAnyOrderElementsOf(urls(byRank.subList(1, 4)));
        assertThat(streaming()).containsExactlyInAnyOrderElementsOf(urls(byRank.subList(1, 4)));

        time.advance(INITIAL.multipliedBy(2)); // its retry, over a one-off connection: it was not eligible
        answer(first, "1.0.0", "i-" + first.port());
        answer(first, "1.0.0", "i-" + first.port()); // its promotion's probe: the stream it keeps
        assertThat(compatible()).as("back, it ranks first again; the fourth is outside once more")
                .containsExactlyInAnyOrderElementsOf(urls(byRank.subList(0, 3)));
        assertThat(state(byRank.get(3))).isEqualTo(State.OUTSIDE_SUBSET);
        assertThat(streaming()).as("the fourth's channel is closed, the first's kept")
                .containsExactlyInAnyOrderElementsOf(urls(byRank.subList(0, 3)));
    }

    @Test
    void withoutSubsetsEveryAcceptedWorkerIsCompatible() {
        tracker(16);
        candidates(ten.toArray(WorkerEndpoint[]::new));
        for (WorkerEndpoint e : ten) {
            answer(e, "1.0.0", "i-" + e.port());
        }
        assertThat(compatible()).hasSize(10);
        assertThat(last().counts().outsideSubset()).isZero();
        assertThat(streaming()).hasSize(10);
    }
}
