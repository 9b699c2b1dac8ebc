package dev.rollcall.local.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The child process of a real server run on loopback ({@code EtcdServer} here, the testkit's
 * {@code DnsServer}), with the temporary directory it works in: stopped and started again in place,
 * then closed for good. A JVM shutdown hook kills it and deletes the directory if its owner never
 * closes it. The launcher starts the process and hands it over with {@link #started}. Thread-safe;
 * {@link #stop} and {@link #close} wait at most twice the stop bound and never throw (an interrupt
 * ends the wait, kills the process and stays set). Internal: for rollcall-local and rollcall-testkit.
 */
public final class ServerProcess {

    private final Path home;
    private final Duration stopWithin;
    private final Thread cleanup;
    private Process process;    // guarded by this
    private boolean closed;     // guarded by this

    /**
     * @param home              the server's temporary directory, deleted by {@link #close}
     * @param cleanupThreadName the shutdown hook's name, e.g. {@code rollcall-etcd-server-cleanup}
     * @param stopWithin        how long the process has to end after SIGTERM, and after SIGKILL
     */
    public ServerProcess(Path home, String cleanupThreadName, Duration stopWithin) {
        this.home = Objects.requireNonNull(home, "home");
        this.stopWithin = Objects.requireNonNull(stopWithin, "stopWithin");
        this.cleanup = new Thread(this::destroy, cleanupThreadName);
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /** The launcher started {@code p}: it is the server's process from now on. */
    public synchronized void started(Process p) {
        process = Objects.requireNonNull(p, "process");
    }

    /** Forgets {@code p}, which ended by itself (seen while waiting for it to be ready). */
    public synchronized void exited(Process p) {
        if (process == p) {
            process = null;
        }
    }

    /** The server's process; null before {@link #started}, and once stopped, closed or exited. */
    public synchronized Process current() {
        return process;
    }

    /** Whether the server's process is running. */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Whether {@link #close} was called. */
    public synchronized boolean isClosed() {
        return closed;
    }

    /** Asks the process to end (SIGTERM), kills it (SIGKILL) if it has not within the bound; keeps the directory. Idempotent. */
    public void stop() {
        Process p = take();
        if (p == null) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(stopWithin.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(stopWithin.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Kills the process and deletes the directory; the first call only (idempotent). */
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        destroy();
        ServerCleanup.removeShutdownHook(cleanup);
    }

    private void destroy() {
        Process p = take();
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(stopWithin.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ServerCleanup.deleteTree(home);
    }

    private synchronized Process take() {
        Process p = process;
        process = null;
        return p;
    }
}
