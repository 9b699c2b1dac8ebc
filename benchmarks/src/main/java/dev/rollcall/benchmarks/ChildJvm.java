package dev.rollcall.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Another JVM on this one's class path and Java ({@code java.home}), for the parts that must not
 * share a process with the harness: servers (file descriptors), fresh-JVM and footprint
 * measurements. Its standard error goes to a log file; a shutdown hook kills it if the harness dies
 * first.
 */
final class ChildJvm implements AutoCloseable {

    /** Arrow (in core's class path) needs this on Java 17; harmless when Arrow is not loaded. */
    static final String ARROW_OPENS = "--add-opens=java.base/java.nio=ALL-UNNAMED";
    /**
     * And this on Java 24 or newer, or every Arrow allocation fails inside Netty (Java 17 refuses
     * the flag): as {@code ./benchmark} starts the harness.
     */
    private static final String ARROW_UNSAFE = "--sun-misc-unsafe-memory-access=allow";

    private final String what;
    private final Process process;
    private final BufferedReader out;
    private final Thread killer;

    private ChildJvm(String what, Process process) {
        this.what = what;
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.killer = new Thread(process::destroyForcibly, "rollcall-bench-kill-" + what);
        Runtime.getRuntime().addShutdownHook(killer);
    }

    /** Starts {@code mainClass} with {@code jvmArgs} and {@code args}; standard error goes to {@code log}. */
    static ChildJvm start(String what, List<String> jvmArgs, Class<?> mainClass, List<String> args, Path log) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add(ARROW_OPENS);
        if (Runtime.version().feature() >= 24) {
            command.add(ARROW_UNSAFE);
        }
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        try {
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            return new ChildJvm(what, p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + what + ": " + command, e);
        }
    }

    /** The next line the child prints that starts with {@code prefix} (others are skipped), without the prefix. */
    String awaitLine(String prefix) {
        try {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot read its output", e);
        }
        throw new IllegalStateException(what + " ended (exit " + exitCode() + ") before printing '" + prefix
                + "'; see its log");
    }

    /** Sends one line to the child's standard input. */
    void send(String line) {
        try {
            process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
            process.getOutputStream().flush();
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot write to it", e);
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * Kills it without a word: {@code destroyForcibly()}, which is {@code SIGKILL} on Linux (no
     * shutdown hook, no goodbye on any connection: the kernel closes its sockets). Returns once it
     * is gone.
     */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes its standard input (children exit on end of input), then kills it if it has not exited within 10 s. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // it may be gone already
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killer);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
