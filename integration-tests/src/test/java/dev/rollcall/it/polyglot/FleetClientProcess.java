package dev.rollcall.it.polyglot;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the fleet clients of {@code examples/clients} (Python's {@code fleet_client.py}, Node's
 * {@code fleet-client.js}) as a real process following a fleet service on loopback. What it prints
 * on standard output is kept as lines and, for {@code watch}, parsed into {@link Seen} snapshots;
 * standard error (its reconnects, skips, refusals) is kept apart. Both are logged.
 *
 * <p>What it needs and is missing (node and the npm packages, python3-grpcio) fails the start with
 * how to install it ({@code ./run-tests} does). Thread-safe. {@link #close()} kills it if it runs.
 */
final class FleetClientProcess implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FleetClientProcess.class);
    /** {@code snapshot N of INSTANCE compatible K: URL VERSION, URL VERSION} (a version with a space or comma is JSON-quoted). */
    private static final Pattern SNAPSHOT = Pattern.compile("^snapshot (\\d+) of (\\S+) compatible (\\d+): ?(.*)$");
    private static final int MAX_KEPT_LINES = 20_000;

    /** One snapshot line of {@code watch}: its number, the service instance, and the compatible workers (URL to version). */
    record Seen(long number, String instance, Map<String, String> compatible, long seenAtNanos) {
    }

    /** The two clients. */
    enum Client {
        PYTHON, NODE;

        Path dir() {
            return ReferenceWorker.repositoryRoot().resolve("examples/clients").resolve(name().toLowerCase());
        }

        List<String> command(String... args) {
            List<String> c = new ArrayList<>(switch (this) {
                case PYTHON -> List.of(ReferenceWorker.pythonBinary(), "fleet_client.py");
                case NODE -> List.of(String.valueOf(ReferenceWorker.nodeBinary()), "fleet-client.js");
            });
            c.addAll(Arrays.asList(args));
            return c;
        }

        @Override
        public String toString() {
            return name().toLowerCase();
        }
    }

    private final String name;
    private final Process process;
    private final List<String> out = new ArrayList<>(); // guarded by itself
    private final List<String> err = new ArrayList<>(); // guarded by itself
    private final List<Seen> seen = new ArrayList<>(); // guarded by out
    private final Thread outReader;
    private final Thread errReader;

    private FleetClientProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.outReader = reader(process.getInputStream(), out, true);
        this.errReader = reader(process.getErrorStream(), err, false);
    }

    /** {@code watch} against {@code service}. */
    static FleetClientProcess watch(Client client, InetSocketAddress service, String... more) {
        List<String> args = new ArrayList<>(List.of("watch", "--target", target(service)));
        args.addAll(List.of(more));
        return start(client, args.toArray(String[]::new));
    }

    /** {@code fleet_client.py query} against {@code service}: the hold lasts until {@link #command}{@code ("end")}. */
    static FleetClientProcess query(InetSocketAddress service) {
        return start(Client.PYTHON, "query", "--target", target(service));
    }

    /** Any Python program run from the Python client's folder (so it can {@code import fleet_client}). */
    static FleetClientProcess python(String name, String program, String... args) {
        requirePrerequisites(Client.PYTHON);
        List<String> command = new ArrayList<>(List.of(ReferenceWorker.pythonBinary(), "-c", program));
        command.addAll(List.of(args));
        return launch(name, Client.PYTHON.dir(), command);
    }

    static FleetClientProcess start(Client client, String... args) {
        requirePrerequisites(client);
        return launch(client + " " + args[0], client.dir(), client.command(args));
    }

    private static FleetClientProcess launch(String name, Path dir, List<String> command) {
        try {
            return new FleetClientProcess(name, new ProcessBuilder(command).directory(dir.toFile()).start());
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", command) + " in " + dir + ": "
                    + e.getMessage(), e);
        }
    }

    static String target(InetSocketAddress a) {
        return "127.0.0.1:" + a.getPort();
    }

    private Thread reader(InputStream stream, List<String> lines, boolean stdout) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    long at = System.nanoTime();
                    log.info("[{} pid {}{}] {}", name, process.pid(), stdout ? "" : " stderr", line);
                    synchronized (lines) {
                        if (lines.size() < MAX_KEPT_LINES) {
                            lines.add(line);
                        }
                        Matcher m = SNAPSHOT.matcher(line);
                        if (stdout && m.matches()) {
                            seen.add(new Seen(Long.parseLong(m.group(1)), m.group(2), pairs(m.group(4)), at));
                        }
                    }
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "fleet-client-" + name + "-" + process.pid() + (stdout ? "-out" : "-err"));
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static Map<String, String> pairs(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        if (!text.isEmpty()) {
            for (String pair : text.split(", ")) {
                int space = pair.indexOf(' ');
                m.put(pair.substring(0, space), pair.substring(space + 1));
            }
        }
        return m;
    }

    /** Every snapshot line of {@code watch} so far, in the order printed. */
    List<Seen> seen() {
        synchronized (out) {
            return List.copyOf(seen);
        }
    }

    /** The last snapshot line so far, or null. */
    Seen last() {
        synchronized (out) {
            return seen.isEmpty() ? null : seen.get(seen.size() - 1);
        }
    }

    boolean saw(Predicate<Seen> snapshot) {
        synchronized (out) {
            return seen.stream().anyMatch(snapshot);
        }
    }

    boolean printed(Predicate<String> line) {
        synchronized (out) {
            return out.stream().anyMatch(line);
        }
    }

    boolean saidOnStderr(Predicate<String> line) {
        synchronized (err) {
            return err.stream().anyMatch(line);
        }
    }

    /** Standard output so far. */
    String output() {
        synchronized (out) {
            return String.join("\n", out);
        }
    }

    /** Standard error so far. */
    String errors() {
        synchronized (err) {
            return String.join("\n", err);
        }
    }

    /** Both, for an assertion's message. */
    String transcript() {
        return this + "\n--- stdout ---\n" + output() + "\n--- stderr ---\n" + errors();
    }

    /** Writes one line to its standard input. */
    void command(String line) {
        try {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write '" + line + "' to " + this, e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL, as a crash or a machine that dies; waits until the process is gone. */
    void kill() {
        process.toHandle().destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /**
     * Waits for it to end and returns its exit code, its output read to the end.
     *
     * @throws AssertionError with its transcript when it still runs after {@code wait}
     */
    int awaitExit(Duration wait) {
        try {
            if (!process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(this + " still runs " + wait.toMillis() + " ms later:\n" + transcript());
            }
            outReader.join(wait.toMillis());
            errReader.join(wait.toMillis());
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
        return "the " + name + " fleet client (pid " + process.pid() + ")";
    }

    private static void requirePrerequisites(Client client) {
        switch (client) {
            case NODE -> ChildProcesses.requireNode("the Node fleet client", client.dir(), "@grpc/grpc-js");
            case PYTHON -> ChildProcesses.requirePython("the Python fleet client");
        }
    }
}
