package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetServerConfigTest {

    /** Discovery that never lists anyone: the server's configuration is all this test reads. */
    private static final class Silent implements WorkerDiscovery {
        @Override
        public void start(CandidateListener listener) {
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aBadServeValueNamesTheKeyTheValueAndTheFileItCameFrom(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("serve.properties"), "rollcall.serve.max-watchers=0\n");
        RollcallConfig config = RollcallConfig.load(file);
        try (WorkerResolver resolver = WorkerResolver.builder().discovery(new Silent())
                .policy(w -> Verdict.accept()).build()) {
            assertThatThrownBy(() -> FleetServer.builder(resolver).config(config).port(0).http(false).start())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.serve.max-watchers")
                    .hasMessageContaining("'0'")
                    .hasMessageContaining("(from " + config.origin("rollcall.serve.max-watchers") + ")");
        }
    }
}
