package dev.rollcall.local.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher runs a real etcd: it answers, survives a restart with its data, and cleans up. */
class EtcdServerTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** etcd's JSON gateway, so that this test needs no etcd client library. */
    private String call(EtcdServer etcd, String path, String body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(etcd.endpoint() + path))
                .timeout(Duration.ofSeconds(5))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }

    @Test
    void runsOnLoopbackAndKeepsItsDataAcrossARestartOnTheSamePort() throws Exception {
        Path data;
        try (EtcdServer etcd = EtcdServer.start()) {
            data = etcd.dataDir();
            assertThat(etcd.endpoint()).startsWith("http://127.0.0.1:");
            assertThat(etcd.isRunning()).isTrue();
            call(etcd, "/v3/kv/put", "{\"key\":\"" + b64("/k") + "\",\"value\":\"" + b64("v1") + "\"}");

            etcd.stop();
            assertThat(etcd.isRunning()).isFalse();
            assertThatThrownBy(() -> call(etcd, "/v3/kv/range", "{}")).isInstanceOf(IOException.class);

            String endpoint = etcd.endpoint();
            etcd.restart();
            assertThat(etcd.endpoint()).isEqualTo(endpoint);
            String range = call(etcd, "/v3/kv/range", "{\"key\":\"" + b64("/k") + "\"}");
            assertThat(range).contains(b64("v1"));
            assertThat(Files.readString(etcd.logFile())).as("etcd's output goes to its log file").contains("ready");
        }
        assertThat(data).doesNotExist();
    }

    @Test
    void saysHowToInstallEtcdWhenItIsMissing(@TempDir Path empty) {
        assertThatThrownBy(() -> EtcdServer.findBinary(Map.of("PATH", empty.toString()), empty.resolve("etcd")))
                .isInstanceOf(EtcdServer.EtcdNotInstalledException.class)
                .hasMessageContaining("apt-get install -y etcd-server");
        assertThatThrownBy(() -> EtcdServer.findBinary(Map.of(EtcdServer.BINARY_ENV, empty.resolve("nope").toString()),
                empty.resolve("etcd")))
                .hasMessageContaining(EtcdServer.BINARY_ENV).hasMessageContaining("apt-get install -y etcd-server");
    }

    @Test
    void findsAnEtcdOnThePath(@TempDir Path bin) throws IOException {
        Path fake = Files.createFile(bin.resolve("etcd"));
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        assertThat(EtcdServer.findBinary(Map.of("PATH", "/nonexistent:" + bin), bin.resolve("missing"))).isEqualTo(fake);
    }
}
