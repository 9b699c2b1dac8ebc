package dev.rollcall.policy;

import dev.rollcall.api.InternalNpmRange;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.semver4j.Semver;

/**
 * Ranges come from settings and the console: any text is a range whose printed form
 * ({@link SemverRangePolicy#range()}) selects the same versions, or an {@link IllegalArgumentException} naming the range,
 * escaped and bounded. The policy judges any version without throwing.
 */
class NpmRangeFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    private static final List<String> PROBES = List.of("0.0.0", "0.0.1", "0.1.0", "0.1.1", "1.0.0-rc.1", "1.0.0",
            "1.2.3", "1.4.0-beta", "1.4.0", "1.4.9", "1.5.0", "2.0.0-0", "2.0.0", "2.1.0", "10.20.30", "2147483646.0.0");
    private static final Pattern VERSION = Pattern.compile("(\\d{1,9})\\.(\\d{1,9})\\.(\\d{1,9})");
    private static final WorkerEndpoint ENDPOINT = WorkerEndpoint.of("127.0.0.1", 7001);

    @FuzzTest
    @Timeout(30)
    void rangeTextSelectsAsItsPrintedFormOrIsRefusedByName(byte[] input) {
        boolean includePrerelease = input.length > 0 && (input[0] & 1) == 1;
        String text = new String(input, Math.min(1, input.length), Math.max(0, input.length - 1), StandardCharsets.UTF_8);
        SemverRangePolicy policy;
        try {
            policy = SemverRangePolicy.of(text, includePrerelease);
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).startsWith("invalid semver range '");
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        // The range as the policy prints it (descriptions, the console) must read back as the same range.
        InternalNpmRange range = InternalNpmRange.compile(text, includePrerelease);
        InternalNpmRange printed = InternalNpmRange.compile(policy.range(), includePrerelease);
        for (String v : probes(text)) {
            Semver version = Semver.parse(v);
            assertThat(printed.matches(version)).as("%s on %s, printed %s", text, v, policy.range())
                    .isEqualTo(range.matches(version));
        }
        assertThat(policy.check(WorkerInfo.of(ENDPOINT, text))).isNotNull();
    }

    /** Fixed versions, and those the text names with their neighbours, where a range's edges are. */
    private static List<String> probes(String text) {
        List<String> out = new ArrayList<>(PROBES);
        Matcher m = VERSION.matcher(text);
        while (m.find() && out.size() < 64) {
            long major = Long.parseLong(m.group(1));
            long minor = Long.parseLong(m.group(2));
            long patch = Long.parseLong(m.group(3));
            out.add(major + "." + minor + "." + patch);
            out.add(major + "." + minor + "." + (patch + 1));
            out.add(major + "." + minor + "." + patch + "-0");
            if (patch > 0) {
                out.add(major + "." + minor + "." + (patch - 1));
            }
            out.add(major + "." + (minor + 1) + ".0");
            out.add((major + 1) + ".0.0");
        }
        return out;
    }
}
