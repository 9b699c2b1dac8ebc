package dev.rollcall.it.polyglot;

import dev.rollcall.api.WorkerEndpoint;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the reference workers of another language ({@code examples/workers/node},
 * {@code examples/workers/python}) as a real process on loopback: started with its command line,
 * known once it printed the address it bound, stopped with SIGTERM (its drain) or SIGKILL (a crash).
 * Its standard output and error are kept (and logged) so that a failure can show them.
 *
 * <p>What it needs and is missing (node and the npm packages, python3-grpcio) fails the start with
 * a message that says how to install it: {@code ./run-tests} installs all of it, CI has it, so a
 * test never skips. Thread-safe. {@link #close()} kills the process if it still runs.
 */
final class ReferenceWorker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReferenceWorker.class);
    private static final Duration START_WAIT = Duration.ofSeconds(20);
    /** The line both workers print once they serve: {@code serving grpc://127.0.0.1:PORT instance=ID version=V ...}. */
    private static final Pattern SERVING = Pattern.compile("serving grpc://127\\.0\\.0\\.1:(\\d+) instance=(\\S+) version=");
    private static final int MAX_KEPT_LINES = 5_000;
    private static final Map<Language, String> CHECKED = new ConcurrentHashMap<>();

    /** The two languages, each with how to run it and what it needs. */
    enum Language {
        NODE("node"), PYTHON("python");

        final String folder;

        Language(String folder) {
            this.folder = folder;
        }

        Path dir() {
            return repositoryRoot().resolve("examples/workers").resolve(folder);
        }

        /** The command that runs the worker. */
        List<String> command() {
            return switch (this) {
                case NODE -> List.of(nodeBinary(), "worker.js");
                case PYTHON -> List.of(pythonBinary(), "worker.py");
            };
        }

        @Override
        public String toString() {
            return folder;
        }
    }

    private final Language language;
    private final String version;
    private final Process process;
    private final List<String> lines; // guarded by itself; written by the reader thread
    private final Thread reader;
    private final int port;
    private final String instanceId;

    private ReferenceWorker(Language language, String version, Process process, List<String> lines, Thread reader,
                            int port, String instanceId) {
        this.language = language;
        this.version = version;
        this.process = process;
        this.port = port;
        this.instanceId = instanceId;
        this.lines = lines;
        this.reader = reader;
    }

    /** Starts a worker of {@code language} at {@code version} on a free port; {@code args} are more of its options. */
    static ReferenceWorker start(Language language, String version, String... args) {
        return startOn(language, 0, version, args);
    }

    /**
     * Starts a worker on {@code port} (0: any) and waits until it says it serves.
     *
     * @throws IllegalStateException with the process's output when it exits or says nothing within 20 s
     */
    static ReferenceWorker startOn(Language language, int port, String version, String... args) {
        requirePrerequisites(language);
        List<String> command = new ArrayList<>(language.command());
        command.addAll(List.of("--version", version, "--port", Integer.toString(port)));
        command.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(command).directory(language.dir().toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the " + language + " worker (" + String.join(" ", command)
                    + "): " + e.getMessage(), e);
        }
        List<String> lines = new ArrayList<>();
        CompletableFuture<Matcher> serving = new CompletableFuture<>();
        Thread reader = new Thread(() -> read(p, language, version, lines, serving),
                "reference-worker-" + language + "-" + p.pid());
        reader.setDaemon(true);
        reader.start();
        Matcher m;
        try {
            m = serving.get(START_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            m = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            m = null;
        }
        if (m == null) {
            p.destroyForcibly();
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            String said;
            synchronized (lines) {
                said = String.join("\n", lines);
            }
            throw new IllegalStateException("the " + language + " worker did not start within " + START_WAIT.toSeconds()
                    + " s (" + (p.isAlive() ? "still running" : "exit code " + p.exitValue()) + "); command: "
                    + String.join(" ", command) + " in " + language.dir() + "; its output:\n" + said);
        }
        return new ReferenceWorker(language, version, p, lines, reader, Integer.parseInt(m.group(1)), m.group(2));
    }

    /** How a worker's process ended, and all it printed (standard output and error). */
    record Exit(int code, String output) {
    }

    /**
     * Runs a worker of {@code language} that is expected to refuse its command line, and waits for it
     * to end.
     *
     * @throws IllegalStateException with its output when it still runs after 20 s (it was not refused)
     */
    static Exit runUntilExit(Language language, String version, String... args) {
        requirePrerequisites(language);
        List<String> command = new ArrayList<>(language.command());
        command.addAll(List.of("--version", version, "--port", "0"));
        command.addAll(List.of(args));
        Process p = null;
        try {
            p = new ProcessBuilder(command).directory(language.dir().toFile()).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(readAll(p));
            if (!p.waitFor(START_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the " + language + " worker still runs " + START_WAIT.toSeconds()
                        + " s after it started with " + String.join(" ", args));
            }
            return new Exit(p.exitValue(), new String(output.get(START_WAIT.toMillis(), TimeUnit.MILLISECONDS),
                    StandardCharsets.UTF_8));
        } catch (IOException | ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot run the " + language + " worker: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            if (p != null) {
                ChildProcesses.kill(p);
            }
        }
    }

    private static Supplier<byte[]> readAll(Process p) {
        return () -> {
            try {
                return p.getInputStream().readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    /** The reader thread: keeps every line, logs it, and completes {@code serving} with the serving line. */
    private static void read(Process p, Language language, String version, List<String> lines,
                             CompletableFuture<Matcher> serving) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                log.info("[{} {} pid {}] {}", language, version, p.pid(), line);
                synchronized (lines) {
                    if (lines.size() < MAX_KEPT_LINES) {
                        lines.add(line);
                    }
                }
                Matcher m = SERVING.matcher(line);
                if (!serving.isDone() && m.find()) {
                    serving.complete(m);
                }
            }
        } catch (IOException closed) {
            // the process ended
        } finally {
            serving.completeExceptionally(new IllegalStateException("the output ended"));
        }
    }

    Language language() {
        return language;
    }

    String version() {
        return version;
    }

    int port() {
        return port;
    }

    WorkerEndpoint endpoint() {
        return WorkerEndpoint.of("127.0.0.1", port);
    }

    /** The instance id it printed when it started. */
    String instanceId() {
        return instanceId;
    }

    /** Sends SIGTERM (its drain); returns {@link System#nanoTime()} just before. */
    long terminate() {
        long at = System.nanoTime();
        // The handle's, not Process.destroy(): that one also closes our ends of its pipes, and a worker
        // that logs its drain would then write into a broken pipe.
        process.toHandle().destroy(); // SIGTERM
        return at;
    }

    /** SIGKILL, as a crash or a machine that dies; waits until the process is gone. */
    void kill() {
        process.toHandle().destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /**
     * Waits for the process to end and returns its exit code; {@link #output()} then holds all it printed.
     *
     * @throws AssertionError with its output when it still runs after {@code wait}
     */
    int awaitExit(Duration wait) {
        try {
            if (!process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(this + " still runs " + wait.toMillis() + " ms later; its output:\n" + output());
            }
            reader.join(wait.toMillis()); // its last lines may still be in the pipe
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Writes one command line to its standard input ({@code drain}, {@code resume}, {@code label k=v}, ...). */
    void command(String line) {
        try {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write '" + line + "' to " + this, e);
        }
    }

    /** Every line it printed so far. */
    String output() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    /** Whether a line it printed so far matches. */
    boolean printed(Predicate<String> line) {
        synchronized (lines) {
            return lines.stream().anyMatch(line);
        }
    }

    @Override
    public void close() {
        ChildProcesses.kill(process);
    }

    @Override
    public String toString() {
        return "the " + language + " worker " + version + " (pid " + process.pid() + ", port " + port + ")";
    }

    // ---- what the workers need, checked once per language and JVM ----

    /** The repository's root: the nearest folder above the working directory that has {@code examples/workers}. */
    static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("examples/workers"))) {
                return p;
            }
        }
        throw new IllegalStateException("no examples/workers above " + Path.of("").toAbsolutePath());
    }

    /** {@code ROLLCALL_NODE}, else {@code node} on the PATH. */
    static String nodeBinary() {
        String given = System.getenv("ROLLCALL_NODE");
        return given != null && !given.isBlank() ? given : onPath("node", "nodejs");
    }

    /** {@code ROLLCALL_PYTHON}, else Debian's {@code /usr/bin/python3} (a pyenv python3 on the PATH lacks grpcio). */
    static String pythonBinary() {
        String given = System.getenv("ROLLCALL_PYTHON");
        return given != null && !given.isBlank() ? given : "/usr/bin/python3";
    }

    private static String onPath(String... names) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            for (String name : names) {
                Path p = Path.of(dir.isEmpty() ? "." : dir, name);
                if (Files.isExecutable(p)) {
                    return p.toString();
                }
            }
        }
        return null;
    }

    private static void requirePrerequisites(Language language) {
        String problem = CHECKED.computeIfAbsent(language, ReferenceWorker::missing);
        if (!problem.isEmpty()) {
            throw new IllegalStateException(problem);
        }
    }

    /** What is missing to run {@code language}'s worker, and how to install it; "" when nothing is. */
    private static String missing(Language language) {
        return switch (language) {
            case NODE -> {
                if (nodeBinary() == null) {
                    yield "node is not on the PATH: the Node reference worker needs Node.js 18 or newer"
                            + " (./run-tests installs Debian's nodejs; or apt-get install -y nodejs npm, or set ROLLCALL_NODE)";
                }
                Path grpcJs = language.dir().resolve("node_modules/@grpc/grpc-js/package.json");
                yield Files.isRegularFile(grpcJs) ? ""
                        : "the Node reference worker's packages are not installed (no " + grpcJs + "): run 'npm ci' in "
                        + language.dir() + " (./run-tests does)";
            }
            case PYTHON -> {
                String python = pythonBinary();
                if (!Files.isExecutable(Path.of(python))) {
                    yield python + " is missing: the Python reference worker runs on Debian's python3"
                            + " (apt-get install -y python3-grpcio python3-protobuf; ./run-tests does; or set ROLLCALL_PYTHON)";
                }
                yield pythonImports(python);
            }
        };
    }

    private static String pythonImports(String python) {
        try {
            Process p = new ProcessBuilder(python, "-c", "import grpc, google.protobuf").redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return python + " did not import grpc within 30 s";
            }
            return p.exitValue() == 0 ? ""
                    : python + " cannot import grpc and protobuf (" + said.lines().reduce((a, b) -> b).orElse("")
                    + "): apt-get install -y python3-grpcio python3-protobuf (./run-tests does)";
        } catch (IOException e) {
            return "cannot run " + python + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking " + python;
        }
    }
}
