package dev.rollcall.it.polyglot;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the xDS clients of {@code examples/clients} (Node's {@code node-xds/xds-client.js} on
 * {@code @grpc/grpc-js-xds}, Python's {@code xds_client.py} on Debian's grpcio) as a real process: a
 * channel on {@code xds:///fleet} calling {@code WorkerInfo} in a loop, its bootstrap the very one
 * {@code docs/xds.md} prints for that client, with the test's port in place of {@code 7700}. Each
 * JSON line it prints becomes a {@link Call}, stamped when the test read it.
 *
 * <p>What it needs and is missing (node and the npm packages, python3-grpcio) fails the start with
 * how to install it ({@code ./run-tests} does). Thread-safe. {@link #close()} kills it if it runs.
 */
final class XdsClientProcess implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(XdsClientProcess.class);
    private static final String DOCUMENTED_ADDRESS = "127.0.0.1:7700";
    private static final int MAX_KEPT_CALLS = 200_000;

    /** One call the client made: who answered ({@code version}, {@code instanceId}) or why it failed ({@code error}). */
    record Call(long number, String version, String instanceId, String error, String details, long readAtNanos) {
        boolean answered() {
            return error == null;
        }
    }

    /** The two clients, each with the heading of its section in docs/xds.md. */
    enum Client {
        NODE("### grpc-js (Node)"), PYTHON("### gRPC Python");

        private final String heading;

        Client(String heading) {
            this.heading = heading;
        }

        Path dir() {
            return ReferenceWorker.repositoryRoot().resolve(this == NODE ? "examples/clients/node-xds" : "examples/clients/python");
        }

        List<String> command(String... args) {
            List<String> c = new ArrayList<>(this == NODE
                    ? List.of(String.valueOf(ReferenceWorker.nodeBinary()), "xds-client.js")
                    : List.of(ReferenceWorker.pythonBinary(), "xds_client.py"));
            c.addAll(List.of(args));
            return c;
        }

        @Override
        public String toString() {
            return this == NODE ? "grpc-js-xds" : "grpc python";
        }
    }

    private final Client client;
    private final Process process;
    private final List<Call> calls = new ArrayList<>(); // guarded by itself
    private final List<String> err = new ArrayList<>(); // guarded by itself

    private XdsClientProcess(Client client, Process process) {
        this.client = client;
        this.process = process;
        read(process.getInputStream(), true);
        read(process.getErrorStream(), false);
    }

    /**
     * Starts {@code client} on {@code xds:///fleet} against the control plane at {@code controlPlane},
     * calling every {@code intervalMs}; its bootstrap (written into {@code dir}) is docs/xds.md's.
     */
    static XdsClientProcess start(Client client, InetSocketAddress controlPlane, Path dir, int intervalMs) {
        requirePrerequisites(client);
        Path bootstrap = dir.resolve("bootstrap-" + client.name().toLowerCase() + ".json");
        try {
            Files.writeString(bootstrap, documentedBootstrap(client).replace(DOCUMENTED_ADDRESS,
                    "127.0.0.1:" + controlPlane.getPort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ProcessBuilder pb = new ProcessBuilder(client.command("--target", "xds:///fleet",
                "--interval-ms", Integer.toString(intervalMs), "--deadline-ms", "5000")).directory(client.dir().toFile());
        pb.environment().put("GRPC_XDS_BOOTSTRAP", bootstrap.toString());
        try {
            return new XdsClientProcess(client, pb.start());
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + pb.command() + " in " + client.dir() + ": " + e.getMessage(), e);
        }
    }

    /** The first {@code json} block under {@code client}'s heading in docs/xds.md. */
    static String documentedBootstrap(Client client) {
        Path page = ReferenceWorker.repositoryRoot().resolve("docs/xds.md");
        String text;
        try {
            text = Files.readString(page);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int at = text.indexOf("\n" + client.heading + "\n");
        if (at < 0) {
            throw new IllegalStateException(page + " has no section '" + client.heading + "'");
        }
        String section = text.substring(at + 1);
        Matcher next = Pattern.compile("\n#{2,3} ").matcher(section);
        section = next.find(1) ? section.substring(0, next.start()) : section;
        Matcher block = Pattern.compile("```json\n(.*?)\n```", Pattern.DOTALL).matcher(section);
        if (!block.find()) {
            throw new IllegalStateException(page + "'s section '" + client.heading + "' shows no ```json bootstrap");
        }
        if (!block.group(1).contains(DOCUMENTED_ADDRESS)) {
            throw new IllegalStateException(page + "'s bootstrap for " + client + " names no " + DOCUMENTED_ADDRESS);
        }
        return block.group(1);
    }

    private void read(InputStream stream, boolean stdout) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    long at = System.nanoTime();
                    if (!stdout) {
                        log.info("[{} pid {} stderr] {}", client, process.pid(), line);
                        synchronized (err) {
                            err.add(line);
                        }
                        continue;
                    }
                    Call call = parse(line, at);
                    if (!call.answered()) {
                        log.info("[{} pid {}] {}", client, process.pid(), line);
                    }
                    synchronized (calls) {
                        if (calls.size() < MAX_KEPT_CALLS) {
                            calls.add(call);
                        }
                    }
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "xds-client-" + client.name().toLowerCase() + "-" + process.pid() + (stdout ? "-out" : "-err"));
        t.setDaemon(true);
        t.start();
    }

    private Call parse(String line, long at) {
        try {
            JsonObject o = JsonParser.parseString(line).getAsJsonObject();
            return new Call(o.get("call").getAsLong(), text(o, "version"), text(o, "instance_id"), text(o, "error"),
                    text(o, "details"), at);
        } catch (RuntimeException e) {
            throw new AssertionError(this + " printed a line that is not a call's JSON: " + line, e);
        }
    }

    private static String text(JsonObject o, String key) {
        return o.has(key) && !o.get(key).isJsonNull() ? o.get(key).getAsString() : null;
    }

    /** Every call so far, in the order printed. */
    List<Call> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    /** The calls read after {@code nanos} ({@link System#nanoTime()}). */
    List<Call> callsAfter(long nanos) {
        return calls().stream().filter(c -> c.readAtNanos() - nanos > 0).toList();
    }

    /** How many calls in a row, counted back from the last, {@code instanceId} did not answer. */
    int trailingCallsNotOn(String instanceId) {
        List<Call> all = calls();
        int n = 0;
        for (int i = all.size() - 1; i >= 0 && !instanceId.equals(all.get(i).instanceId()); i--) {
            n++;
        }
        return n;
    }

    /** The last {@code n} calls, for an assertion's message, and standard error. */
    String transcript(int n) {
        List<Call> all = calls();
        StringBuilder b = new StringBuilder(this + ": " + all.size() + " calls; the last " + n + ":");
        all.subList(Math.max(0, all.size() - n), all.size()).forEach(c -> b.append('\n').append(c));
        synchronized (err) {
            b.append("\n--- stderr ---\n").append(String.join("\n", err));
        }
        return b.toString();
    }

    @Override
    public void close() {
        ChildProcesses.kill(process);
    }

    @Override
    public String toString() {
        return "the " + client + " xDS client (pid " + process.pid() + ")";
    }

    private static void requirePrerequisites(Client client) {
        switch (client) {
            case NODE -> ChildProcesses.requireNode("the Node xDS client", client.dir(), "@grpc/grpc-js-xds");
            case PYTHON -> ChildProcesses.requirePython("the Python xDS client");
        }
    }
}
