package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Real workers for the macro scenarios, in separate JVMs ({@link ServerFleetMain}): 10,000 listening
 * sockets plus one accepted connection each do not fit in one process under a limit of 20,000 file
 * descriptors, and the client under test needs its own 10,000. Each JVM holds at most
 * {@value #PER_JVM} servers on ports below 32768 (Linux's ephemeral ports start there, so the
 * clients' own connections never collide with them).
 */
final class ServerFleets implements AutoCloseable {

    static final int PER_JVM = 4_000;
    private static final int FIRST_PORT = 10_000;
    private static final int LAST_PORT = 32_767;

    private final List<ChildJvm> jvms = new ArrayList<>();
    private final List<WorkerEndpoint> endpoints = new ArrayList<>();

    private ServerFleets() {
    }

    /** Starts {@code count} workers reporting {@code version}, in as many JVMs as needed; returns when all listen. */
    static ServerFleets start(int count, String version, Path logDir) {
        return start(count, version, logDir, false);
    }

    /** Like {@link #start(int, String, Path)}; with {@code flight}, every worker also serves Arrow Flight. */
    static ServerFleets start(int count, String version, Path logDir, boolean flight) {
        ServerFleets fleets = new ServerFleets();
        try {
            int jvmCount = (count + PER_JVM - 1) / PER_JVM;
            int span = (LAST_PORT - FIRST_PORT + 1) / jvmCount;
            for (int i = 0; i < jvmCount; i++) {
                int n = Math.min(PER_JVM, count - i * PER_JVM);
                int first = FIRST_PORT + i * span;
                // Their pauses on the wall clock (a line is written at a pause's end), to lay beside the
                // harness's Timeline. A young generation of a fixed 512 MB holds what a convergence on
                // 10,000 allocates in each (about 150 MB), so that with collectGarbage() between runs
                // none is collected during one; by default one came every 250-300 MB, in every other run.
                String gcLog = "-Xlog:gc:file=" + logDir.resolve("servers-" + i + "-gc.log").toAbsolutePath() + ":time,uptime";
                fleets.jvms.add(ChildJvm.start("servers-" + i,
                        List.of("-Xms1g", "-Xmx1g", "-Xmn512m", "-XX:+UseParallelGC", "-Xss256k", gcLog), ServerFleetMain.class,
                        List.of(String.valueOf(n), String.valueOf(first), String.valueOf(first + span - 1), version,
                                flight ? "flight" : "plain"),
                        logDir.resolve("servers-" + i + ".log")));
            }
            for (ChildJvm jvm : fleets.jvms) {
                Arrays.stream(jvm.awaitLine("PORTS ").split(","))
                        .forEach(p -> fleets.endpoints.add(WorkerEndpoint.of("127.0.0.1", Integer.parseInt(p))));
            }
        } catch (RuntimeException e) {
            fleets.close();
            throw e;
        }
        return fleets;
    }

    List<WorkerEndpoint> endpoints() {
        return List.copyOf(endpoints);
    }

    /** Probes answered so far by all servers (asks each JVM). */
    long probesAnswered() {
        long sum = 0;
        for (ChildJvm jvm : jvms) {
            jvm.send("answered");
            sum += Long.parseLong(jvm.awaitLine("ANSWERED "));
        }
        return sum;
    }

    /**
     * Collects every servers JVM's heap (all at once) and returns when all are done: a timed phase
     * that starts after it meets no young collection of theirs, which on two cores shared with the
     * harness took 40–720 ms each and landed on whichever side happened to be running.
     */
    void collectGarbage() {
        jvms.forEach(jvm -> jvm.send("gc"));
        jvms.forEach(jvm -> jvm.awaitLine("COLLECTED "));
    }

    @Override
    public void close() {
        jvms.forEach(ChildJvm::close);
    }
}
