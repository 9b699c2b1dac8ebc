package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import dev.rollcall.core.WorkerResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A key exists in one declaration, its module's catalog: every key table in docs/configuration.md
 * and the module READMEs names only declared keys, with the catalog's default; every declared key
 * has its row in docs/configuration.md, and one row only, on all those pages together (a fact
 * written twice drifts); and no code reads a key that no catalog declares. Keys
 * under a prefix no catalog declares (a backend without a catalog yet) and the
 * {@code rollcall.keys.<service>.<method>} family are outside the check.
 */
class KeyTablesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String CONFIGURATION = "docs/configuration.md";
    /** A table row whose first cell is a key: the key and the default cell. */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`(rollcall\\.[^`]+)`\\s*\\|([^|]*)\\|");
    private static final Pattern HEADER = Pattern.compile("^\\|\\s*key\\s*\\|\\s*default\\s*\\|",
            Pattern.CASE_INSENSITIVE);

    private static List<SettingKey<?>> catalog() {
        return KeyCatalog.all(KeyTablesTest.class.getClassLoader());
    }

    /** The pages with key tables: docs/configuration.md and every module README. */
    private static Map<String, String> pages() throws IOException {
        Map<String, String> pages = new LinkedHashMap<>();
        pages.put(CONFIGURATION, Files.readString(ROOT.resolve(CONFIGURATION), StandardCharsets.UTF_8));
        try (var dirs = Files.list(ROOT)) {
            for (Path dir : dirs.sorted().toList()) {
                Path readme = dir.resolve("README.md");
                if (Files.isDirectory(dir) && Files.isRegularFile(readme)) {
                    pages.put(ROOT.relativize(readme).toString(), Files.readString(readme, StandardCharsets.UTF_8));
                }
            }
        }
        return pages;
    }

    @Test
    void theKeyTablesNameOnlyDeclaredKeysWithTheCatalogsDefaultsAndListEveryKey() throws IOException {
        List<String> problems = problems(pages(), catalog());
        assertThat(problems).isEmpty();
        assertThat(catalog()).as("core, worker, console and policy catalogs").hasSizeGreaterThan(60);
    }

    @Test
    void aKeyDeclaredInACatalogButInNoDocsTableIsReported() throws IOException {
        List<SettingKey<?>> planted = new ArrayList<>(catalog());
        planted.add(SettingKey.define("rollcall-core", "rollcall.probe.planted", SettingType.DURATION,
                "a key added in one place only").byDefault(Duration.ofSeconds(1)));
        assertThat(problems(pages(), planted)).containsExactly(
                "rollcall.probe.planted (rollcall-core): declared, but no row in " + CONFIGURATION);
    }

    @Test
    void aDocsRowNamingAnUndeclaredKeyOrAnotherDefaultIsReported() throws IOException {
        Map<String, String> pages = pages();
        String timeoutRow = "| `rollcall.probe.timeout` | `2s` |";
        assertThat(pages.get(CONFIGURATION)).contains(timeoutRow);
        pages.put(CONFIGURATION, pages.get(CONFIGURATION).replace(timeoutRow, "| `rollcall.probe.timeout` | `3s` |"));
        pages.put("planted/README.md", "| Key | Default | Meaning |\n|---|---|---|\n"
                + "| `rollcall.probe.timeot` | `2s` | a typo |\n"
                + "| `rollcall.discovery.planted.endpoints` | — | a backend without a catalog: not checked |\n");
        assertThat(problems(pages, catalog())).containsExactly(
                CONFIGURATION + ": rollcall.probe.timeout's default is `3s`, the catalog's `2s`",
                "planted/README.md: rollcall.probe.timeot is in a key table but no catalog declares it");
    }

    @Test
    void aKeyWithRowsInTwoTablesIsReportedNamingBothPlaces() throws IOException {
        Map<String, String> pages = pages();
        pages.put("planted/README.md", "# rollcall-planted\n\n## Keys\n\n| key | default | meaning |\n|---|---|---|\n"
                + "| `rollcall.probe.timeout` | `2s` | a row docs/configuration.md has already |\n");
        assertThat(problems(pages, catalog())).containsExactly("rollcall.probe.timeout has a row in "
                + CONFIGURATION + " (Keys) and in planted/README.md (Keys): one row per key");
    }

    @Test
    void noCodeReadsAKeyThatNoCatalogDeclares() throws Exception {
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:1", "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0"));
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config)) {
            assertThat(resolver.awaitVersion(1, Duration.ofSeconds(10)).number()).isPositive();
        }
        assertThat(config.readKeys()).as("keys read while building").hasSizeGreaterThan(30);
        assertThat(undeclared(config.readKeys(), catalog())).isEmpty();
    }

    @Test
    void aKeyReadButDeclaredNowhereIsRefused() {
        RollcallConfig config = RollcallConfig.of(Map.of());
        config.settings().raw("rollcall.probe.planted"); // a reader that skipped the catalog
        assertThat(undeclared(config.readKeys(), catalog())).containsExactly("rollcall.probe.planted");
    }

    /** What is wrong with the key tables of {@code pages} against {@code catalog}, one line each. */
    static List<String> problems(Map<String, String> pages, List<SettingKey<?>> catalog) {
        Map<String, SettingKey<?>> byName = new LinkedHashMap<>();
        catalog.forEach(k -> byName.put(k.name(), k));
        List<String> problems = new ArrayList<>();
        Set<String> inConfiguration = new HashSet<>();
        Map<String, List<String>> places = new LinkedHashMap<>();
        for (Map.Entry<String, String> page : pages.entrySet()) {
            for (String[] row : rows(page.getValue())) {
                String key = row[0];
                if (page.getKey().equals(CONFIGURATION)) {
                    inConfiguration.add(key);
                }
                if (byName.containsKey(key) || !undeclared(List.of(key), catalog).isEmpty()) {
                    places.computeIfAbsent(key, k -> new ArrayList<>()).add(page.getKey() + " (" + row[2] + ")");
                }
                SettingKey<?> declared = byName.get(key);
                if (declared == null) {
                    if (!undeclared(List.of(key), catalog).isEmpty()) {
                        problems.add(page.getKey() + ": " + key + " is in a key table but no catalog declares it");
                    }
                } else if (declared.defaultValue() != null) {
                    String expected = "`" + shown(declared) + "`";
                    if (!row[1].startsWith(expected)) {
                        problems.add(page.getKey() + ": " + key + "'s default is " + row[1].split(" ")[0]
                                + ", the catalog's " + expected);
                    }
                }
            }
        }
        places.forEach((key, where) -> {
            if (where.size() > 1) {
                problems.add(key + " has a row in " + String.join(" and in ", where) + ": one row per key");
            }
        });
        for (SettingKey<?> key : catalog) {
            if (!inConfiguration.contains(key.name())) {
                problems.add(key.name() + " (" + key.module() + "): declared, but no row in " + CONFIGURATION);
            }
        }
        return problems;
    }

    /**
     * The keys of {@code keys} that no catalog declares although a catalog declares a key beside them
     * (same prefix up to the last dot): the rule the resolver's unknown-key check applies.
     */
    static List<String> undeclared(Collection<String> keys, List<SettingKey<?>> catalog) {
        Set<String> names = new HashSet<>();
        Set<String> parents = new HashSet<>();
        for (SettingKey<?> k : catalog) {
            names.add(k.name());
            parents.add(k.name().substring(0, k.name().lastIndexOf('.') + 1));
        }
        return keys.stream().filter(k -> !k.contains("<") && !k.startsWith("rollcall.keys."))
                .filter(k -> !names.contains(k) && parents.contains(k.substring(0, k.lastIndexOf('.') + 1)))
                .sorted().toList();
    }

    /**
     * Each key row of a table headed {@code | key | default | ...}: the key, its default cell and the
     * heading the table is under.
     */
    private static List<String[]> rows(String markdown) {
        List<String[]> rows = new ArrayList<>();
        boolean inTable = false;
        String heading = "top";
        boolean inCode = false;
        for (String line : markdown.split("\n")) {
            if (line.startsWith("```")) {
                inCode = !inCode;
            }
            if (!inCode && line.startsWith("#")) {
                heading = line.replaceFirst("^#+\\s*", "").strip();
                continue;
            }
            if (HEADER.matcher(line).find()) {
                inTable = true;
                continue;
            }
            if (!line.startsWith("|")) {
                inTable = false;
                continue;
            }
            Matcher m = ROW.matcher(line);
            if (inTable && m.find() && !m.group(1).contains("<")) {
                rows.add(new String[] {m.group(1), m.group(2).strip(), heading});
            }
        }
        return rows;
    }

    private static <T> String shown(SettingKey<T> key) {
        String text = key.type().text(key.defaultValue());
        return text.isEmpty() ? "\"\"" : text;
    }
}
