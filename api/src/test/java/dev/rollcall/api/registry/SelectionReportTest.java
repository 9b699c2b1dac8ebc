package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The one-line account of a selection that logs and status output show. */
class SelectionReportTest {

    private static final WorkerStatus OUT = new WorkerStatus(WorkerEndpoint.of("127.0.0.1", 7001),
            WorkerStatus.State.UNREACHABLE, "refused", Optional.empty());

    @Test
    void summaryNamesTheChosenCohortWithItsExplanationTheCohortsAndHowManyAreExcluded() {
        SelectionReport r = new SelectionReport("rollout ^2", Optional.of("2.1.0"), "6 of 10",
                new TreeMap<>(Map.of("2.1.0", 6, "2.0.0", 4)), List.of(OUT));

        assertThat(r.summary()).isEqualTo("policy rollout ^2: chose 2.1.0 (6 of 10); cohorts 2.0.0 x4, 2.1.0 x6; excluded 1");
        assertThat(r).hasToString(r.summary());
    }

    @Test
    void summaryWithoutACohortShowsTheExplanationAfterAColonAndNoneForNoCohorts() {
        SelectionReport r = new SelectionReport("prefer", Optional.empty(), "first range empty", new TreeMap<>(),
                List.of());

        assertThat(r.summary()).isEqualTo("policy prefer: first range empty; cohorts none; excluded 0");
    }

    @Test
    void summaryShowsAnUnsetVersionAsQuotesAndAChosenEmptyOneAsNoVersion() {
        SelectionReport r = new SelectionReport("exact (no version)", Optional.of(""), "",
                new TreeMap<>(Map.of("", 2)), List.of(OUT, OUT));

        assertThat(r.summary()).isEqualTo("policy exact (no version): chose (no version); cohorts (no version) x2; excluded 2");
    }

    @Test
    void summaryWithNeitherCohortNorExplanationIsThePolicyAlone() {
        SelectionReport r = new SelectionReport("semver ^1", Optional.empty(), "", new TreeMap<>(), List.of());

        assertThat(r.summary()).isEqualTo("policy semver ^1; cohorts none; excluded 0");
    }
}
