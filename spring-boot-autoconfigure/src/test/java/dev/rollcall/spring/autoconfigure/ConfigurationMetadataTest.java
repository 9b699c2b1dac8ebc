package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The configuration metadata IDEs complete {@code application.yml} from is generated from the key
 * catalogs: it lists every key core's table (docs/configuration.md) and the worker's README document, and the starter's own,
 * each with the catalog's default and doc.
 */
class ConfigurationMetadataTest {

    private static Map<String, JsonNode> metadata() throws IOException {
        Map<String, JsonNode> byName = new HashMap<>();
        for (String file : List.of("META-INF/spring-configuration-metadata.json")) {
            try (InputStream in = ConfigurationMetadataTest.class.getClassLoader().getResourceAsStream(file)) {
                assertThat(in).as(file).isNotNull();
                for (JsonNode p : JsonMapper.builder().build().readTree(in).path("properties")) {
                    byName.put(p.path("name").asString(), p);
                }
            }
        }
        return byName;
    }

    @Test
    void listsEveryKeyOfTheResolversAndTheWorkersReadmeTables() throws IOException {
        Map<String, JsonNode> metadata = metadata();
        int documented = 0;
        Map<String, String> tables = Map.of(
                "docs/configuration.md, ### rollcall-core", coresTable(),
                "worker/README.md", Files.readString(Path.of("..", "worker", "README.md")));
        for (Map.Entry<String, String> table : tables.entrySet()) {
            Matcher row = Pattern.compile("(?m)^\\| `(rollcall\\.[a-z0-9.-]+)` \\|").matcher(table.getValue());
            while (row.find()) {
                documented++;
                assertThat(metadata).as("%s documents %s", table.getKey(), row.group(1)).containsKey(row.group(1));
            }
        }
        assertThat(documented).as("key rows found in core's and the worker's tables").isGreaterThan(30);
    }

    /** Core's keys table: the {@code ### rollcall-core} section of docs/configuration.md. */
    private static String coresTable() throws IOException {
        String page = Files.readString(Path.of("..", "docs", "configuration.md"));
        int from = page.indexOf("\n### rollcall-core\n");
        assertThat(from).as("docs/configuration.md's ### rollcall-core").isNotNegative();
        int to = page.indexOf("\n### ", from + 1);
        return page.substring(from, to < 0 ? page.length() : to);
    }

    @Test
    void listsEveryKeyOfTheCatalogsTheStarterDependsOnWithTheCatalogsDefaultAndDoc() throws IOException {
        Map<String, JsonNode> metadata = metadata();
        // The catalogs on the starter's own class path; a policy's or a backend's module is the application's
        // choice (here on the test class path only), its keys in its README.
        Set<String> modules = Set.of("rollcall-core", "rollcall-worker", "rollcall-spring-boot-autoconfigure");
        int checked = 0;
        for (SettingKey<?> key : KeyCatalog.all(getClass().getClassLoader())) {
            if (!modules.contains(key.module())) {
                continue;
            }
            checked++;
            JsonNode entry = metadata.get(key.name());
            assertThat(entry).as("%s in the metadata", key.name()).isNotNull();
            assertThat(entry.path("description").asString()).as(key.name())
                    .containsIgnoringCase(key.doc().substring(0, Math.min(40, key.doc().length())));
            if (key.defaultValue() != null) {
                assertThat(entry.path("defaultValue").asString()).as(key.name())
                        .isEqualTo(defaultText(key));
            } else {
                assertThat(entry.has("defaultValue")).as("%s has no fixed default", key.name()).isFalse();
            }
        }
        assertThat(checked).as("keys of core, the worker and the starter").isGreaterThan(50);
    }

    private static <T> String defaultText(SettingKey<T> key) {
        return key.type().text(key.defaultValue());
    }

    @Test
    void listsTheStartersKeysWithTheirDefaults() throws IOException {
        Map<String, JsonNode> metadata = metadata();
        assertThat(metadata.get("rollcall.readiness.min-workers").path("defaultValue").asInt()).isEqualTo(1);
        assertThat(metadata.get("rollcall.resolver.enabled").path("defaultValue").asBoolean()).isTrue();
        assertThat(metadata.get("rollcall.worker.enabled").path("defaultValue").asBoolean()).isFalse();
        assertThat(metadata.get("rollcall.probe.timeout").path("defaultValue").asString()).isEqualTo("2s");
        assertThat(metadata.get("rollcall.drain.exact").path("defaultValue").asBoolean()).isFalse();
        assertThat(metadata.get("rollcall.publish.max-rate").path("defaultValue").asInt()).isEqualTo(20);
        assertThat(metadata).containsKeys("rollcall.worker.version", "rollcall.readiness.version",
                "rollcall.discovery.type", "rollcall.policy.type", "management.endpoint.rollcall.access");
        assertThat(metadata.get("rollcall.probe.concurrency").path("description").asString()).isNotBlank();
        assertThat(metadata.get("rollcall.probe.max-kept-channels").path("description").asString())
                .as("its default is derived, so the description says the rule").contains("descriptor limit");
        assertThat(metadata.get("rollcall.probe.max-kept-channels").has("defaultValue")).as("no fixed default").isFalse();
        assertThat(metadata.get("rollcall.subset.size").path("description").asString()).contains("rendezvous");
        assertThat(metadata.get("rollcall.subset.coordinator-id").path("description").asString()).contains("HOSTNAME");
    }
}
