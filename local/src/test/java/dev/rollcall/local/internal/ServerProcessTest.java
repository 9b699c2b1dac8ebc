package dev.rollcall.local.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerProcessTest {

    private static final Duration GENEROUS = Duration.ofSeconds(30);

    @Test
    void stopEndsAServerThatAgreesToEndAndKeepsItsDirectory(@TempDir Path tmp) throws Exception {
        Path home = Files.createDirectories(tmp.resolve("rollcall-etcd-1/data"));
        ServerProcess child = new ServerProcess(home, "rollcall-test-server-cleanup", GENEROUS);
        Process server = started(child, "echo ready; exec sleep 600");
        try {
            child.stop();

            assertThat(server.isAlive()).isFalse();
            assertThat(server.exitValue()).as("ended by SIGTERM").isEqualTo(128 + 15);
            assertThat(child.isRunning()).isFalse();
            assertThat(home).as("kept for a restart in place").exists();
        } finally {
            child.close();
        }
    }

    @Test
    void stopKillsAServerThatIgnoresTheRequestToEnd(@TempDir Path tmp) throws Exception {
        ServerProcess child = new ServerProcess(tmp, "rollcall-test-server-cleanup", Duration.ofMillis(200));
        // The ignored SIGTERM survives the exec, as in a server that hangs on its way out.
        Process server = started(child, "trap '' TERM; echo ready; exec sleep 600");
        try {
            child.stop();

            assertThat(server.isAlive()).isFalse();
            assertThat(server.exitValue()).as("ended by SIGKILL").isEqualTo(128 + 9);
        } finally {
            child.close();
        }
    }

    @Test
    void closeKillsTheServerAndDeletesItsDirectoryOnce(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("rollcall-etcd-1");
        Files.createDirectories(home.resolve("data/member/wal"));
        Files.writeString(home.resolve("data/member/wal/0.wal"), "x");
        ServerProcess child = new ServerProcess(home, "rollcall-test-server-cleanup", GENEROUS);
        Process server = started(child, "echo ready; exec sleep 600");

        child.close();
        child.close();

        assertThat(server.isAlive()).isFalse();
        assertThat(home).doesNotExist();
        assertThat(child.isClosed()).isTrue();
    }

    /** A child process that has run {@code script} up to its {@code echo ready}, handed to {@code child}. */
    private static Process started(ServerProcess child, String script) throws IOException {
        Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
        child.started(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("ready");
        return p;
    }
}
