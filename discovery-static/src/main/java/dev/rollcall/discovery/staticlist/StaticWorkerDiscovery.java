package dev.rollcall.discovery.staticlist;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code static} discovery backend: candidates from a fixed list, a watched file, or the union
 * of both. Created by {@link StaticWorkerDiscoveryProvider}.
 *
 * <p><b>What it publishes.</b> {@link #start} publishes the configured list at once, on the calling
 * thread, and returns without touching the file system (when only a file is configured, nothing is
 * published until the file has been read, since an empty set would claim there are no workers).
 * When a file is configured, one daemon thread named {@code rollcall-static-file-watch} reads it,
 * publishes the union, and re-reads it on every change event in its directory (so replacing the
 * file by rename and Kubernetes ConfigMap symlink swaps are seen, typically well within a second)
 * and every {@code file.poll-interval} as a fallback. A set is published only when it differs from
 * the last one published, so touching or rewriting the file unchanged publishes nothing.
 *
 * <p><b>Failures.</b> A malformed line is skipped and logged at WARN with the file, line number and
 * reason; the other lines are still published. A missing, unreadable or oversized file is reported
 * once through {@link CandidateListener#onError} with a message naming the path (and again only if
 * the reason changes); the backend keeps watching and publishes as soon as the file can be read
 * again, even if its content is what it was before.
 *
 * <p><b>Threads.</b> The listener is called from the thread that calls {@code start} and from the
 * watch thread, never concurrently and never after {@link #close} has returned. Thread-safe;
 * {@code start} may be called once. {@code close} stops the thread, releases the WatchService, is
 * idempotent and never throws.
 */
public final class StaticWorkerDiscovery implements WorkerDiscovery {

    private static final Logger LOG = LoggerFactory.getLogger(StaticWorkerDiscovery.class);

    private final Set<WorkerEndpoint> propertyEndpoints;
    private final String endpointsKey;
    private final Path file;            // null when no file is configured
    private final String fileKey;
    private final Duration pollInterval;

    private final Object lock = new Object();
    private CandidateListener listener;         // guarded by lock
    private FileWatchLoop watch;                // guarded by lock
    private boolean started;                    // guarded by lock
    private boolean closed;                     // guarded by lock
    private Set<WorkerEndpoint> published;      // guarded by lock; null until the first publish
    private String failure;                     // guarded by lock; the reported error, null when healthy
    private volatile int knownCount;

    // Touched only by the watch thread.
    private byte[] lastContent;

    /** Counts file reads so tests can tell that a rewrite was looked at, not merely not yet seen. */
    private final AtomicLong fileReads = new AtomicLong();

    StaticWorkerDiscovery(Set<WorkerEndpoint> propertyEndpoints, String endpointsKey, Path file, String fileKey,
            Duration pollInterval) {
        this.propertyEndpoints = propertyEndpoints;
        this.endpointsKey = endpointsKey;
        this.file = file;
        this.fileKey = fileKey;
        this.pollInterval = pollInterval;
        this.knownCount = propertyEndpoints.size();
    }

    /**
     * Publishes the configured list (if any) and, when a file is configured, starts the watch thread.
     *
     * @throws IllegalStateException when called a second time or after {@link #close}
     */
    @Override
    public void start(CandidateListener listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (lock) {
            if (started || closed) {
                throw new IllegalStateException(description() + " was already " + (closed ? "closed" : "started"));
            }
            started = true;
            this.listener = listener;
            if (file == null || !propertyEndpoints.isEmpty()) {
                publish(propertyEndpoints, endpointsKey);
            }
            if (file != null) {
                watch = new FileWatchLoop(file, pollInterval, this::refresh);
                watch.start();
            }
        }
    }

    /** Runs on the watch thread: reads the file and publishes the union if it changed. */
    private void refresh() {
        fileReads.incrementAndGet();
        byte[] content;
        try {
            content = EndpointFile.read(file);
        } catch (IOException e) {
            lastContent = null;     // so that a file coming back with its old content is published again
            reportFailure(e);
            return;
        }
        if (lastContent != null && Arrays.equals(content, lastContent)) {
            return;     // unchanged: skip parsing so malformed lines are logged once, not every poll
        }
        lastContent = content;
        EndpointFile.Parsed parsed = EndpointFile.parse(file, content);
        Set<WorkerEndpoint> union = new LinkedHashSet<>(propertyEndpoints);
        union.addAll(parsed.endpoints());
        String source = parsed.skipped() == 0 ? file.toString()
                : file + " (" + parsed.skipped() + " malformed line" + (parsed.skipped() == 1 ? "" : "s") + " skipped)";
        synchronized (lock) {
            publish(Collections.unmodifiableSet(union), propertyEndpoints.isEmpty() ? source : endpointsKey + " and " + source);
        }
    }

    /** Caller holds {@code lock}. */
    private void publish(Set<WorkerEndpoint> latest, String source) {
        if (closed) {
            return;
        }
        // After an error the resolver marks the set stale until the next onCandidates, so an
        // unchanged set must still be sent to clear that mark.
        if (failure == null && latest.equals(published)) {
            return;
        }
        LOG.info("static discovery: {} candidate endpoint{} from {}{}", latest.size(), latest.size() == 1 ? "" : "s",
                source, failure == null ? "" : " (readable again)");
        published = latest;
        failure = null;
        knownCount = latest.size();
        LOG.debug("static discovery candidates: {}", latest);
        listener.onCandidates(latest);
    }

    private void reportFailure(IOException e) {
        String message = "cannot read " + fileKey + "=" + file + ": " + reason(e);
        synchronized (lock) {
            if (closed || message.equals(failure)) {
                // Closed: the read was probably cut short by close() itself. Same failure: already
                // reported; the resolver keeps it until the next onCandidates.
                return;
            }
            failure = message;
            LOG.warn("{}; the last good set stays in use while the file is watched for recovery", message);
            listener.onError(new IOException(message, e));
        }
    }

    private static String reason(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "it does not exist";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Stops the watch thread and closes its WatchService. Idempotent; never throws. */
    @Override
    public void close() {
        FileWatchLoop toClose;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = watch;
        }
        // Outside the lock: the watch thread may be waiting for it to publish, and close() joins that thread.
        if (toClose != null) {
            toClose.close();
        }
    }

    /** E.g. {@code static[file=/etc/rollcall/workers.txt, 2 endpoints]} or {@code static[3 endpoints]}. */
    @Override
    public String description() {
        int n = knownCount;
        return "static[" + (file == null ? "" : "file=" + file + ", ") + n + (n == 1 ? " endpoint" : " endpoints") + "]";
    }

    @Override
    public String toString() {
        return description();
    }

    long fileReads() {
        return fileReads.get();
    }
}
