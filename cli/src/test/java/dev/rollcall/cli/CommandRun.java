package dev.rollcall.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;

/**
 * One in-process run of {@code rollcall ...}: its exit code and what it wrote to stdout and stderr.
 * The writers are {@link StringWriter}s (synchronised), so a test may read {@link #out()} while the
 * command is still running on another thread.
 */
final class CommandRun {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final CommandLine commandLine = RollcallCommand.commandLine(new RollcallCommand())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true));

    /** Runs {@code args} on the calling thread and returns the exit code. */
    int execute(String... args) {
        return commandLine.execute(args);
    }

    /**
     * Starts {@code args} on a new thread named {@code rollcall-test-<name>}; the returned future
     * completes with the exit code. Interrupt the thread to stop a {@code --watch}.
     */
    Background start(String name, String... args) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                exit.complete(execute(args));
            } catch (Throwable t) {
                exit.completeExceptionally(t);
            }
        }, "rollcall-test-" + name);
        thread.start();
        return new Background(thread, exit);
    }

    /** A run in progress on its own thread. */
    record Background(Thread thread, CompletableFuture<Integer> exit) {
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }

    List<String> outLines() {
        return out().lines().toList();
    }

    /** Runs {@code rollcall args} once and returns the finished run. */
    static Finished run(String... args) {
        CommandRun run = new CommandRun();
        int exit = run.execute(args);
        return new Finished(exit, run.out(), run.err());
    }

    /** A finished run. */
    record Finished(int exit, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }

        /** For assertion messages: everything the run printed. */
        String transcript() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }
}
