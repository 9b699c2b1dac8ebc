package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The configuration metadata IDEs complete {@code application.yml} from is generated from the key
 * catalogs: it lists every key of core's, the worker's, the server's and the starter's catalogs, each with the
 * catalog's default and doc. That the docs' key tables name the same keys is KeyTablesTest's
 * check (integration-tests), against the same catalogs.
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
    void listsEveryKeyOfTheCatalogsTheStarterDependsOnWithTheCatalogsDefaultAndDoc() throws IOException {
        Map<String, JsonNode> metadata = metadata();
        // The catalogs on the starter's own class path; a policy's or a backend's module is the application's
        // choice (here on the test class path only), its keys in its README.
        Set<String> modules = Set.of("rollcall-core", "rollcall-worker", "rollcall-server",
                "rollcall-spring-boot-autoconfigure");
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
        assertThat(checked).as("keys of core, the worker, the server and the starter").isGreaterThan(50);
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
        assertThat(metadata.get("rollcall.serve.enabled").path("defaultValue").asBoolean()).isFalse();
        assertThat(metadata.get("rollcall.serve.port").path("defaultValue").asInt()).isEqualTo(7700);
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
