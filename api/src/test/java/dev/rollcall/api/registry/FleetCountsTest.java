package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FleetCountsTest {

    @Test
    void toStringMentionsEachCountWithItsMeaning() {
        FleetCounts c = new FleetCounts(65, 11, 12, 13, 29);

        assertThat(c.toString())
                .contains("65 candidates")
                .contains("11 compatible")
                .contains("12 rejected")
                .contains("13 unreachable")
                .contains("29 pending");
    }

    @Test
    void toStringOfEmptyFleet() {
        assertThat(new FleetCounts(0, 0, 0, 0, 0))
                .hasToString("0 candidates: 0 compatible, 0 rejected by version, 0 unreachable, 0 pending");
    }

    @Test
    void equalCountsAreEqual() {
        assertThat(new FleetCounts(3, 1, 1, 1, 0)).isEqualTo(new FleetCounts(3, 1, 1, 1, 0))
                .isNotEqualTo(new FleetCounts(3, 1, 1, 0, 1));
    }

    @Test
    void workersPastTheKeptChannelCapAreSaidOnlyWhenThereAreAnyAndTheOldConstructorsCountNone() {
        assertThat(new FleetCounts(10, 10, 0, 0, 0, 0, 0, 7).toString())
                .endsWith("; 7 without a kept channel (over rollcall.probe.max-kept-channels)");
        assertThat(new FleetCounts(10, 10, 0, 0, 0, 0, 0)).isEqualTo(new FleetCounts(10, 10, 0, 0, 0, 0, 0, 0))
                .extracting(FleetCounts::overKeptCap).isEqualTo(0);
        assertThat(new FleetCounts(10, 10, 0, 0, 0).toString()).doesNotContain("kept");
    }

    @Test
    void aSnapshotCountsWhatItsBuilderWasToldOfTheCap() {
        assertThat(FleetSnapshot.builder(1).overKeptCap(7).build().counts().overKeptCap()).isEqualTo(7);
        assertThat(FleetSnapshot.builder(1).build().counts().overKeptCap()).isZero();
    }
}
