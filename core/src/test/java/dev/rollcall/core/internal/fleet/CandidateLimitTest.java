package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.BuilderValues;
import dev.rollcall.core.internal.settings.ResolverSettings;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;


/**
 * {@code rollcall.discovery.max-candidates}: a set from discovery beyond it is refused whole, before
 * anything of it is copied, tracked or probed; the last good set stays in use, discovery is reported
 * failing with the count and the key, and the next good set recovers. In virtual time.
 */
class CandidateLimitTest extends TrackerHarness {

    /** A set that says it holds {@code size} endpoints and cannot be read: what the limit must never iterate. */
    private static Set<WorkerEndpoint> huge(int size) {
        return new AbstractSet<>() {
            @Override
            public Iterator<WorkerEndpoint> iterator() {
                throw new AssertionError("the oversized set was read");
            }

            @Override
            public int size() {
                return size;
            }
        };
    }

    @Test
    void aSetBeyondTheLimitIsRefusedWholeAndTheLastGoodSetKeptServing() {
        tracker(64);
        DiscoveryFeed feed = new DiscoveryFeed(time.context(), tracker, 3);
        feed.onCandidates(Set.of(a, b));
        time.runUntilIdle();
        answer(a, "1.0.0", "i1");
        answer(b, "1.0.0", "i2");
        int probes = net.sent.size();

        feed.onCandidates(huge(1_000_000));
        time.runUntilIdle();

        assertThat(last().counts().candidates()).isEqualTo(2);
        assertThat(last().workers()).extracting(w -> w.endpoint().url()).containsExactly(a.url(), b.url());
        assertThat(tracker.workers()).hasSize(2);
        assertThat(net.sent).as("nothing of the refused set is probed").hasSize(probes);
        assertThat(last().staleSince()).isPresent();
        assertThat(last().discoveryProblem()).hasValueSatisfying(p -> assertThat(p)
                .contains("discovery listed 1000000 candidates, more than rollcall.discovery.max-candidates (3)")
                .contains("the set is refused whole and the last good set kept"));

        feed.onCandidates(Set.of(a, b, c)); // at the limit: taken
        time.runUntilIdle();
        answer(c, "1.0.0", "i3");
        assertThat(state(c)).isEqualTo(State.COMPATIBLE);
        assertThat(last().staleSince()).isEmpty();
        assertThat(last().discoveryProblem()).isEmpty();
    }

    /** A good set that was waiting to be applied when an oversized one came is still applied: it is newer than the last good one. */
    @Test
    void aGoodSetWaitingToBeAppliedIsNotLostToAnOversizedOneAfterIt() {
        tracker(64);
        DiscoveryFeed feed = new DiscoveryFeed(time.context(), tracker, 2);
        feed.onCandidates(Set.of(a, b));
        feed.onCandidates(huge(3));
        time.runUntilIdle();

        assertThat(last().counts().candidates()).isEqualTo(2);
        assertThat(last().discoveryProblem()).hasValueSatisfying(p -> assertThat(p).contains("listed 3 candidates"));
    }

    @Test
    void theLimitIsConfiguredByItsKeyOrTheBuilder() {
        assertThat(ResolverSettings.read(RollcallConfig.of(Map.of()), null).maxCandidates()).isEqualTo(100_000);
        assertThat(ResolverSettings.read(RollcallConfig.of(Map.of("rollcall.discovery.max-candidates",
                "250000")), null).maxCandidates()).isEqualTo(250_000);
        BuilderValues given = new BuilderValues();
        given.put(CoreKeys.MAX_CANDIDATES, 7);
        assertThat(ResolverSettings.read(given.over(RollcallConfig.of(Map.of("rollcall.discovery.max-candidates",
                "250000"))), null).maxCandidates()).isEqualTo(7);
        assertThatThrownBy(() -> ResolverSettings.read(RollcallConfig.of(Map.of(
                "rollcall.discovery.max-candidates", "0")), null))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.max-candidates='0'");
        assertThatThrownBy(() -> WorkerResolver.builder().maxCandidates(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("rollcall.discovery.max-candidates='0' (WorkerResolver.Builder): expected a whole number"
                        + " from 1 to 10000000");
    }
}
