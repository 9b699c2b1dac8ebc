package dev.rollcall.server.internal.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What requests with the same requirements share: one feed (one narrowing and encoding per
 * publish) however many watch it, its encoding for GetFleet and holds of the same number, and a
 * feed that ends with its last watcher.
 */
class NarrowedFeedsTest {

    private static FleetSnapshot snapshot(long number) {
        FleetSnapshot.Builder b = FleetSnapshot.builder(number);
        for (int i = 1; i <= 4; i++) {
            WorkerEndpoint e = new WorkerEndpoint("10.0.0." + i, 7000, false, Map.of());
            b.status(new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(new WorkerInfo(e, "1.0.0",
                    "instance-" + i, Map.of(), List.of(), i % 2 == 0 ? Capabilities.of("udf:geo_distance")
                    : Capabilities.none()))));
        }
        return b.build();
    }

    @Test
    void watchersOfTheSameRequirementsShareOneFeedWhoseEncodingAlsoAnswersGetFleetUntilTheLastLeaves() {
        NarrowedFeeds feeds = new NarrowedFeeds("service-1");
        Requirements geo = Requirements.of("udf:geo_distance");
        NarrowedFeeds.Feed[] joined = new NarrowedFeeds.Feed[1_000];
        for (int i = 0; i < joined.length; i++) {
            joined[i] = feeds.join(Requirements.parse("udf:geo_distance"));
        }
        assertThat(feeds.feeds()).isOne();
        assertThat(joined).allSatisfy(f -> assertThat(f).isSameAs(joined[0]));

        FleetSnapshot seven = snapshot(7);
        EncodedSnapshot encoded = joined[0].at(seven);
        assertThat(joined[0].at(seven)).as("encoded once per number").isSameAs(encoded);
        assertThat(feeds.of(seven, geo)).as("GetFleet of the same number").isSameAs(encoded);
        assertThat(feeds.of(snapshot(7), Requirements.of("udf:other"))).as("other requirements: their own")
                .isNotSameAs(encoded);

        for (NarrowedFeeds.Feed f : joined) {
            feeds.leave(f);
        }
        assertThat(feeds.feeds()).isZero();
    }
}
