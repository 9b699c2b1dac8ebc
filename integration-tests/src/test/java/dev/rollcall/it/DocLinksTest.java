package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Moving a section never leaves a dead link: every relative link in README.md, BENCHMARKS.md, the
 * {@code docs/} pages and the module READMEs names a file or directory that exists, and a
 * {@code #fragment} into a Markdown page names one of its headings (GitHub's anchors).
 */
class DocLinksTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** An inline link or image: {@code [text](target)} or {@code [text](target "title")}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    @Test
    void everyRelativeLinkPointsToAFileThatExistsAndEveryAnchorToAHeading() throws IOException {
        Map<String, String> pages = ReadmeCodeTest.pages();
        pages.put("BENCHMARKS.md", Files.readString(ROOT.resolve("BENCHMARKS.md"), StandardCharsets.UTF_8));
        List<String> dead = new ArrayList<>();
        int checked = 0;
        for (Map.Entry<String, String> page : pages.entrySet()) {
            Path from = ROOT.resolve(page.getKey());
            for (String target : links(page.getValue())) {
                if (SCHEME.matcher(target).find()) {
                    continue;   // http:, https:, mailto: are not files of this repository
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                String fragment = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = file.isEmpty() ? from : from.getParent().resolve(file).normalize();
                if (!resolved.startsWith(ROOT) || !Files.exists(resolved)) {
                    dead.add(page.getKey() + ": " + target + " (no such file)");
                } else if (fragment != null && resolved.toString().endsWith(".md")
                        && !anchors(Files.readString(resolved, StandardCharsets.UTF_8)).contains(fragment)) {
                    dead.add(page.getKey() + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(50);
        assertThat(dead).as("dead links").isEmpty();
    }

    @Test
    void anchorsAreMadeAsGitHubMakesThem() {
        assertThat(anchors("""
                # Rollcall
                ## Without kept connections: when `probe.keep-channels=false` is safe
                ```properties
                # not a heading
                ```
                ## The worker's keys
                ## Draining a worker
                ## Draining a worker
                """)).containsExactlyInAnyOrder("rollcall",
                "without-kept-connections-when-probekeep-channelsfalse-is-safe", "the-workers-keys",
                "draining-a-worker", "draining-a-worker-1");
        assertThat(links("see [a](docs/a.md#x), `[b](not-a-link.md)` and\n```\n[c](nor-this.md)\n```\n"))
                .containsExactly("docs/a.md#x");
    }

    /** The link targets of a Markdown text, outside code blocks and inline code. */
    static List<String> links(String markdown) {
        List<String> found = new ArrayList<>();
        for (String line : prose(markdown)) {
            Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
            while (m.find()) {
                found.add(m.group(1));
            }
        }
        return found;
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, -N for repeats. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(markdown)) {
            Matcher m = HEADING.matcher(line);
            if (m.matches()) {
                String slug = m.group(1).toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N}\\s_-]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** The lines of a Markdown text that are not inside fenced code blocks. */
    private static List<String> prose(String markdown) {
        List<String> lines = new ArrayList<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced) {
                lines.add(line);
            }
        }
        return lines;
    }
}
