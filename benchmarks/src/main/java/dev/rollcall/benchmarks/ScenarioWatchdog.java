package dev.rollcall.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one scenario with a time limit, so that a scenario that hangs becomes a failed row of the
 * table (with where it hung) instead of a run that never ends. The scenario runs on a thread of its
 * own; past the limit every thread's stack goes to {@code <logs>/hang-<scenario>.txt}, the
 * scenario's thread is interrupted and left behind (a daemon: it cannot keep the JVM alive), and the
 * run goes on. What it still holds (ports, child JVMs) may slow the scenarios after it; the row says
 * that it hung, and where.
 */
final class ScenarioWatchdog {

    /** How a scenario ended: {@code failure} is null when it returned normally. */
    record Outcome(Throwable failure) {
    }

    /** A scenario's body. */
    interface Body {
        void run() throws Exception;
    }

    /** A scenario that did not finish in time: the message says how long and the top of its stack. */
    static final class Hung extends TimeoutException {
        private static final long serialVersionUID = 1L;

        Hung(String message) {
            super(message);
        }

        @Override
        public String toString() {
            return getMessage();
        }
    }

    private ScenarioWatchdog() {
    }

    static Outcome run(String name, Body body, Duration limit, Path logs) {
        FutureTask<Void> task = new FutureTask<>(() -> {
            body.run();
            return null;
        });
        Thread thread = new Thread(task, "scenario " + name);
        thread.setDaemon(true);
        thread.start();
        try {
            task.get(limit.toNanos(), TimeUnit.NANOSECONDS);
            return new Outcome(null);
        } catch (ExecutionException e) {
            return new Outcome(e.getCause());
        } catch (TimeoutException e) {
            String where = top(thread.getStackTrace());
            Path dump = dump(name, logs);
            thread.interrupt();
            return new Outcome(new Hung("did not finish within " + Report.duration(limit.toNanos()) + " (hung) at " + where
                    + (dump == null ? "" : "; every thread's stack in " + dump)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thread.interrupt();
            return new Outcome(e);
        }
    }

    /** The scenario thread's topmost frames in the benchmarks' own code, or its top frame. */
    private static String top(StackTraceElement[] stack) {
        StringBuilder b = new StringBuilder();
        for (StackTraceElement e : stack) {
            String c = e.getClassName();
            boolean own = c.equals(ScenarioWatchdog.class.getName()) || c.startsWith(ScenarioWatchdog.class.getName() + "$");
            if (c.startsWith("dev.rollcall.benchmarks.") && !own) {
                b.append(b.length() == 0 ? "" : " ← ").append(e.getFileName()).append(':').append(e.getLineNumber());
                if (b.length() > 120) {
                    break;
                }
            }
        }
        if (b.length() == 0 && stack.length > 0) {
            b.append(stack[0]);
        }
        return b.toString();
    }

    private static Path dump(String name, Path logs) {
        StringBuilder b = new StringBuilder();
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState()).append('\n');
            for (StackTraceElement e : t.getStackTrace()) {
                b.append("    at ").append(e).append('\n');
            }
            b.append('\n');
        }
        Path file = logs.resolve("hang-" + name.replaceAll("[^A-Za-z0-9]+", "-").toLowerCase(Locale.ROOT) + ".txt");
        try {
            Files.writeString(file, b, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            return null;
        }
    }
}
