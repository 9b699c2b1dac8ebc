package dev.rollcall.discovery.staticlist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StaticWorkerDiscoveryProviderTest {

    private static final String PREFIX = "rollcall.discovery.static.";

    @TempDir
    Path dir;

    @Test
    void rejectsMalformedPropertyEndpointNamingTheFullKeyAndTheItem() {
        assertThatThrownBy(() -> create(Map.of("endpoints", "grpc://ok:7001,grpc//bad:7002")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "endpoints"))
                .hasMessageContaining(PREFIX + "endpoints")
                .hasMessageContaining("grpc//bad:7002")
                .hasMessageNotContaining("'grpc://ok:7001'");
    }

    @Test
    void reportsEveryMalformedPropertyEndpointAtOnce() {
        assertThatThrownBy(() -> create(Map.of("endpoints", "grpc://a:0, ftp://b:21, grpc://c:7001")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("2 malformed items")
                .hasMessageContaining("grpc://a:0")
                .hasMessageContaining("ftp://b:21");
    }

    @Test
    void rejectsConfigurationWithNeitherEndpointsNorFileNamingBothKeys() {
        assertThatThrownBy(() -> create(Map.of()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "endpoints")
                .hasMessageContaining(PREFIX + "file");
    }

    @Test
    void treatsAListOfOnlyCommasAsUnset() {
        assertThatThrownBy(() -> create(Map.of("endpoints", " , ,")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "file");
    }

    @Test
    void rejectsPollIntervalWithoutUnit() {
        assertThatThrownBy(() -> create(Map.of("file", dir.resolve("w.txt").toString(), "file.poll-interval", "5")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "file.poll-interval")
                .hasMessageContaining("'5'");
    }

    @Test
    void rejectsPollIntervalBelowOneHundredMilliseconds() {
        assertThatThrownBy(() -> create(Map.of("file", dir.resolve("w.txt").toString(), "file.poll-interval", "10ms")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "file.poll-interval")
                .hasMessageContaining("100ms");
    }

    @Test
    void rejectsAFileThatIsADirectory() {
        assertThatThrownBy(() -> create(Map.of("file", dir.toString())))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "file")
                .hasMessageContaining("is a directory");
    }

    @Test
    void acceptsAFileThatDoesNotExistYet() {
        try (WorkerDiscovery discovery = create(Map.of("file", dir.resolve("later.txt").toString()))) {
            assertThat(discovery.description())
                    .isEqualTo("static[file=" + dir.resolve("later.txt").toAbsolutePath() + ", 0 endpoints]");
        }
    }

    @Test
    void describesASingleEndpointInTheSingular() {
        try (WorkerDiscovery discovery = create(Map.of("endpoints", "grpc://a:7001"))) {
            assertThat(discovery.description()).isEqualTo("static[1 endpoint]");
        }
    }

    private static WorkerDiscovery create(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        keys.forEach((k, v) -> full.put(PREFIX + k, v));
        return new StaticWorkerDiscoveryProvider().create(Settings.of(full).scope(PREFIX));
    }
}
