package dev.rollcall.testkit;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.worker.RollcallWorker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A real {@link RollcallWorker} in a JVM of its own, configured through Rollcall settings exactly as
 * a user's worker would be (so {@code rollcall.worker.register=true} registers it with the backend
 * the settings name), for tests that need to kill a worker for real: {@link #kill()} sends SIGKILL,
 * so no shutdown hook runs and nothing is deregistered, as when a machine dies.
 *
 * <pre>{@code
 * try (WorkerProcess worker = WorkerProcess.start(config.values(), Duration.ofSeconds(30))) {
 *     String url = worker.url();      // known once the worker serves (and is registered)
 *     worker.kill();
 * }
 * }</pre>
 *
 * <p>The child runs with this JVM's class path and Arrow's {@code --add-opens} (and, on Java 24 and newer,
 * {@code --sun-misc-unsafe-memory-access=allow}); its stderr is appended
 * to {@code target/worker-process-<pid>.log}. Closing ends it cleanly (its standard input closes,
 * so it shuts down and deregisters) and kills it if it has not stopped within 10 s. Thread-safe.
 */
public final class WorkerProcess implements AutoCloseable {

    private static final String READY = "SERVING ";

    private final Process process;
    private final String url;

    private WorkerProcess(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    /**
     * Starts a worker of version {@code 1.0.0} with the given {@code rollcall.*} settings and waits
     * until it serves (and, when it registers, until its backend acknowledged it).
     *
     * @throws IllegalStateException when it does not say so within {@code wait} (its log is named)
     */
    public static WorkerProcess start(Map<String, String> config, Duration wait) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED"));  // Arrow, as for every worker
        if (Runtime.version().feature() >= 24) {
            cmd.add("--sun-misc-unsafe-memory-access=allow"); // Arrow on 24+; Java 17 refuses the flag
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), WorkerProcess.class.getName()));
        config.forEach((k, v) -> cmd.add(k + "=" + v));
        Path log = Path.of("target", "worker-process-" + ProcessHandle.current().pid() + ".log").toAbsolutePath();
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        try {
            line = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    return null;
                }
            }).get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting a worker process", e);
        } catch (ExecutionException | TimeoutException e) {
            line = null;
        }
        if (line == null || !line.startsWith(READY)) {
            p.destroyForcibly();
            throw new IllegalStateException("the worker process did not start within " + wait.toMillis()
                    + " ms (said " + line + "); its log is " + log);
        }
        return new WorkerProcess(p, line.substring(READY.length()).strip());
    }

    /** The worker's endpoint URL, e.g. {@code grpc://127.0.0.1:20123}. */
    public String url() {
        return url;
    }

    /** The worker's port. */
    public int port() {
        return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
    }

    /** SIGKILL, and waits until the process is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the worker process " + process.pid() + " survived SIGKILL for 10 s");
        }
    }

    /** Whether the process still runs. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Ends the worker cleanly (it deregisters), or kills it after 10 s. Idempotent. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** The child's side: {@code key=value} arguments are its settings. Not for direct use. */
    public static void main(String[] args) throws IOException {
        Map<String, String> config = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            config.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        try (RollcallWorker worker = RollcallWorker.builder()
                .version("1.0.0")
                .config(RollcallConfig.of(config))
                .start()) {
            System.out.println(READY + worker.endpoint().url());
            System.out.flush();
            while (System.in.read() >= 0) {
                // Runs until the parent closes our input or kills us.
            }
        }
    }
}
