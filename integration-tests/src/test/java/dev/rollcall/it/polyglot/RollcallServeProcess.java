package dev.rollcall.it.polyglot;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall serve --config FILE} in a JVM of its own ({@code dev.rollcall.cli.RollcallCommand}
 * on this module's class path, as {@code bin/rollcall} runs it), known once it printed its gRPC
 * address; stopped with SIGTERM, its orderly stop. Its output is kept and logged. Thread-safe;
 * {@link #close()} kills it if it still runs.
 */
final class RollcallServeProcess implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RollcallServeProcess.class);
    private static final Duration START_WAIT = Duration.ofSeconds(60);
    private static final Pattern LISTENING = Pattern.compile("^fleet api grpc://127\\.0\\.0\\.1:(\\d+)$");

    private final Process process;
    private final List<String> lines;
    private final Thread reader;
    private final InetSocketAddress grpcAddress;

    private RollcallServeProcess(Process process, List<String> lines, Thread reader, int port) {
        this.process = process;
        this.lines = lines;
        this.reader = reader;
        this.grpcAddress = new InetSocketAddress("127.0.0.1", port);
    }

    /**
     * Writes {@code properties} to {@code config} and runs {@code rollcall serve --config config --port port
     * --http-port 0} (port 0: any free one); returns once it listens.
     *
     * @throws IllegalStateException with its output when it exits or says nothing within 60 s
     */
    static RollcallServeProcess start(Path config, List<String> properties, int port) {
        try {
            Files.write(config, properties, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "dev.rollcall.cli.RollcallCommand",
                "serve", "--config", config.toString(), "--port", Integer.toString(port), "--http-port", "0");
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start rollcall serve: " + e.getMessage(), e);
        }
        List<String> lines = new ArrayList<>();
        CompletableFuture<Integer> listening = new CompletableFuture<>();
        Thread reader = new Thread(() -> read(p, lines, listening), "rollcall-serve-" + p.pid());
        reader.setDaemon(true);
        reader.start();
        try {
            return new RollcallServeProcess(p, lines, reader, listening.get(START_WAIT.toMillis(), TimeUnit.MILLISECONDS));
        } catch (TimeoutException | ExecutionException e) {
            p.destroyForcibly();
            synchronized (lines) {
                throw new IllegalStateException("rollcall serve did not listen within " + START_WAIT.toSeconds()
                        + " s; its output:\n" + String.join("\n", lines), e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void read(Process p, List<String> lines, CompletableFuture<Integer> listening) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                log.info("[rollcall serve pid {}] {}", p.pid(), line);
                synchronized (lines) {
                    lines.add(line);
                }
                Matcher m = LISTENING.matcher(line);
                if (m.matches()) {
                    listening.complete(Integer.parseInt(m.group(1)));
                }
            }
        } catch (IOException closed) {
            // the process ended
        } finally {
            listening.completeExceptionally(new IllegalStateException("its output ended"));
        }
    }

    InetSocketAddress grpcAddress() {
        return grpcAddress;
    }

    /** Everything it printed so far. */
    String output() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    /**
     * SIGTERM, and waits for it to exit.
     *
     * @return its exit code
     */
    int stop(Duration wait) {
        process.toHandle().destroy();
        try {
            if (!process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("rollcall serve still runs " + wait.toMillis() + " ms after SIGTERM:\n" + output());
            }
            reader.join(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        ChildProcesses.kill(process);
    }

    @Override
    public String toString() {
        return "rollcall serve (pid " + process.pid() + ", grpc " + grpcAddress + ")";
    }
}
