package dev.rollcall.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The kit's one definition of each rule against the page operators read, docs/protocol.md. */
class RuleTest {

    @Test
    void theProtocolPageMarksEveryRuleRequiredOrRecommendedAsTheKitDoes() throws IOException {
        String page = Files.readString(protocolPage());
        Map<String, String> marked = new LinkedHashMap<>();
        Pattern.compile("(?m)^\\| (W\\d+) \\| (required|recommended) \\|").matcher(page).results()
                .forEach(m -> marked.put(m.group(1), m.group(2)));
        Map<String, String> kit = Arrays.stream(Rule.values()).collect(Collectors.toMap(Rule::name,
                r -> r.recommended() ? "recommended" : "required", (a, b) -> a, LinkedHashMap::new));

        assertThat(marked).containsExactlyEntriesOf(kit);
    }

    @Test
    void aRequiredRuleCannotBeReportedNotImplemented() {
        Findings findings = new Findings(false);

        assertThatThrownBy(() -> findings.notImplemented("W3", "no instance id"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("W3 is required");
    }

    private static Path protocolPage() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path page = dir.resolve("docs/protocol.md");
            if (Files.isRegularFile(page)) {
                return page;
            }
        }
        throw new IllegalStateException("no docs/protocol.md above " + Path.of("").toAbsolutePath());
    }
}
