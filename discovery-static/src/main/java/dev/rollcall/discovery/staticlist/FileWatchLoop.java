package dev.rollcall.discovery.staticlist;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;
import dev.rollcall.api.internal.NamedThreads;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@code check} on one daemon thread whenever the file may have changed: on any change event
 * in the file's directory, and every poll interval regardless.
 *
 * <p>The directory is watched rather than the file because editors save by writing a new file and
 * renaming it over the old one, and Kubernetes swaps a ConfigMap by re-pointing a {@code ..data}
 * symlink; neither modifies the original file, but both show up as events in its directory. The
 * periodic run covers what events miss: file systems without events (NFS, some container mounts),
 * a file that is a symlink into another directory, and a directory that does not exist yet. Where
 * the platform has no real change events (the JDK's polling WatchService on macOS, or none at all)
 * the period is capped at {@link #NO_EVENTS_POLL_NANOS}, so that an edit is seen within a second
 * everywhere.
 *
 * <p>{@code check} must not throw; if it does, the failure is logged and the loop goes on.
 * {@link #close} may be called from any thread, is idempotent and never throws.
 */
final class FileWatchLoop implements AutoCloseable {

    static final String THREAD_NAME = "rollcall-static-file-watch";

    private static final Logger LOG = LoggerFactory.getLogger(FileWatchLoop.class);

    /**
     * Quiet time after the last event before {@code check} runs: saving in place truncates the file
     * and then writes it, and a read in between would publish a half-written (often empty) list.
     */
    private static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Cap on settling, so a directory that never goes quiet cannot hold an edit back past the one-second target. */
    private static final long MAX_SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private static final Duration STOP_WAIT = Duration.ofSeconds(2);

    /**
     * Re-read period when no real change events can be had (the JDK's polling WatchService, as on
     * macOS, checks every 10 s; some file systems have none): short enough that an edit is still
     * seen within a second. Reading a small file this often costs next to nothing.
     */
    static final long NO_EVENTS_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final Path file;
    private final Path directory;
    private final Runnable check;
    private long pollNanos;                 // touched only by the loop thread after start

    private final Object lock = new Object();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private boolean closed;                 // guarded by lock
    private Thread thread;                  // guarded by lock
    private WatchService watchService;      // guarded by lock; written once, by the loop thread

    // Touched only by the loop thread.
    private WatchKey key;
    private boolean registerFailureLogged;

    FileWatchLoop(Path file, Duration pollInterval, Runnable check) {
        this.file = file;
        this.directory = file.getParent();
        this.pollNanos = pollInterval.toNanos();
        this.check = check;
    }

    /** Starts the thread; it runs {@code check} once straight away. */
    void start() {
        synchronized (lock) {
            if (closed || thread != null) {
                throw new IllegalStateException("file watch for " + file + " was already started or closed");
            }
            thread = NamedThreads.daemonNamed(THREAD_NAME).newThread(this::run);
            thread.start();
        }
    }

    private void run() {
        try {
            openWatchService();
            register();
            runCheck();
            while (!isClosed()) {
                boolean changed = awaitChange(pollNanos);
                if (isClosed()) {
                    return;
                }
                if (!changed) {
                    // The periodic turn also retries a directory that was missing or got replaced.
                    register();
                }
                runCheck();
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // close() woke us up; nothing to do but leave.
        } finally {
            closeWatchService();
            LOG.debug("stopped watching {}", file);
        }
    }

    private void runCheck() {
        try {
            check.run();
        } catch (RuntimeException e) {
            // Dying here would silently freeze the candidate set; better to log and try again next turn.
            LOG.error("checking {} failed; will retry on the next change or poll", file, e);
        }
    }

    /** Waits up to {@code timeoutNanos} for an event; {@code true} when one came (and has settled). */
    private boolean awaitChange(long timeoutNanos) throws InterruptedException {
        WatchService ws = currentWatchService();
        if (ws == null) {
            if (stopped.await(timeoutNanos, TimeUnit.NANOSECONDS)) {
                throw new InterruptedException("closed");
            }
            return false;
        }
        WatchKey signalled = ws.poll(timeoutNanos, TimeUnit.NANOSECONDS);
        if (signalled == null) {
            return false;
        }
        drain(signalled);
        long settleDeadline = System.nanoTime() + MAX_SETTLE_NANOS;
        while (true) {
            long wait = Math.min(SETTLE_NANOS, settleDeadline - System.nanoTime());
            if (wait <= 0) {
                return true;
            }
            WatchKey more = ws.poll(wait, TimeUnit.NANOSECONDS);
            if (more == null) {
                return true;
            }
            drain(more);
        }
    }

    private void drain(WatchKey signalled) {
        for (WatchEvent<?> event : signalled.pollEvents()) {
            if (event.kind() == OVERFLOW) {
                LOG.debug("change events for {} overflowed; re-reading {}", directory, file);
            }
        }
        if (!signalled.reset()) {
            // The directory went away (or was replaced); the periodic turn registers it again.
            LOG.debug("watch on {} is no longer valid", directory);
            key = null;
        }
    }

    private void openWatchService() {
        WatchService ws;
        try {
            ws = file.getFileSystem().newWatchService();
        } catch (IOException | UnsupportedOperationException e) {
            pollNanos = Math.min(pollNanos, NO_EVENTS_POLL_NANOS);
            LOG.warn("cannot watch {} for changes ({}); re-reading it every {} instead",
                    file, e.getMessage(), Duration.ofNanos(pollNanos));
            return;
        }
        if (ws.getClass().getName().equals("sun.nio.fs.PollingWatchService")) {
            // Its "events" arrive up to 10 s late: keep the one-second promise by reading more often.
            pollNanos = Math.min(pollNanos, NO_EVENTS_POLL_NANOS);
            LOG.info("this platform's file watching polls slowly; re-reading {} every {}", file,
                    Duration.ofNanos(pollNanos));
        }
        synchronized (lock) {
            if (!closed) {
                watchService = ws;
                return;
            }
        }
        closeQuietly(ws);
    }

    private void register() {
        WatchService ws = currentWatchService();
        if (ws == null || (key != null && key.isValid())) {
            return;
        }
        try {
            key = directory.register(ws, ENTRY_CREATE, ENTRY_MODIFY, ENTRY_DELETE);
            registerFailureLogged = false;
            LOG.debug("watching directory {} for changes to {}", directory, file);
        } catch (NoSuchFileException e) {
            // The missing file is reported by check; here we only retry on the next periodic turn.
            LOG.debug("directory {} does not exist yet; retrying every {}", directory, Duration.ofNanos(pollNanos));
        } catch (IOException e) {
            if (!registerFailureLogged) {
                registerFailureLogged = true;
                LOG.warn("cannot watch directory {} ({}); re-reading {} every {} instead",
                        directory, e.getMessage(), file, Duration.ofNanos(pollNanos));
            }
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    private WatchService currentWatchService() {
        synchronized (lock) {
            return watchService;
        }
    }

    private void closeWatchService() {
        WatchService ws;
        synchronized (lock) {
            ws = watchService;
        }
        if (ws != null) {
            closeQuietly(ws);
        }
    }

    /** Stops the thread and releases the WatchService; waits briefly for the thread to end. */
    @Override
    public void close() {
        Thread t;
        WatchService ws;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            ws = watchService;
        }
        stopped.countDown();
        if (ws != null) {
            closeQuietly(ws);   // wakes a poll() in progress
        }
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        // Interrupt only helps a read stuck on a slow file system; the paths above wake every wait.
        t.interrupt();
        try {
            t.join(STOP_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("thread {} watching {} did not stop within {}; it is a daemon and will not keep the JVM alive",
                    THREAD_NAME, file, STOP_WAIT);
        }
    }

    private void closeQuietly(WatchService ws) {
        try {
            ws.close();
        } catch (IOException e) {
            LOG.debug("closing the watch service for {} failed", file, e);
        }
    }
}
