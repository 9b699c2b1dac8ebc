package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/**
 * Requirements come from code, the command line, a {@code rollcall:} target and fleet API requests;
 * capabilities from workers: any text is a requirement that reads back from its printed form, or an
 * {@link IllegalArgumentException} naming it, escaped and bounded; matching it against any
 * capability never throws. The input is the requirement, then optionally a NUL and a capability.
 * The suite replays the committed inputs; {@code ./fuzz} fuzzes.
 */
class RequirementFuzzTest {

    private static final List<Capability> FIXED = List.of(Capability.of("udf:geo_distance"),
            new Capability("plan-protocol", "3"), new Capability("datafusion", "55.0.1"),
            new Capability("datafusion", "55.1.0-rc.1"), new Capability("a", "0.0.0"));

    @FuzzTest
    @Timeout(30)
    void requirementTextReadsBackOrIsRefusedByNameAndMatchesWithoutThrowing(byte[] input) {
        String all = new String(input, StandardCharsets.UTF_8);
        int nul = all.indexOf('\0');
        String text = nul < 0 ? all : all.substring(0, nul);
        List<Capability> capabilities = new ArrayList<>(FIXED);
        if (nul >= 0) {
            try {
                capabilities.add(Capability.parse(all.substring(nul + 1)));
            } catch (IllegalArgumentException e) {
                WorkerEndpointFuzzTest.assertCleanRefusal(e, "capability ");
            }
        }
        Requirement requirement;
        try {
            requirement = Requirement.parse(text);
        } catch (IllegalArgumentException e) {
            WorkerEndpointFuzzTest.assertCleanRefusal(e, "requirement '");
            return;
        }
        assertThat(Requirement.parse(requirement.toString())).as("printed %s", requirement).isEqualTo(requirement);
        for (Capability c : capabilities) {
            Capabilities one = Capabilities.of(List.of(c));
            boolean met = requirement.isMetBy(one);
            assertThat(requirement.whyNotMetBy(one).isEmpty()).isEqualTo(met);
            if (met) {
                assertThat(c.name()).isEqualTo(requirement.name());
            }
        }
    }
}
