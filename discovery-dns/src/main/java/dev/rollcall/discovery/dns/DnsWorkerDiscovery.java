package dev.rollcall.discovery.dns;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.DaemonLoop;
import dev.rollcall.discovery.dns.DnsLookup.Answer;
import dev.rollcall.discovery.dns.DnsLookup.LookupFailedException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code dns} discovery backend: the workers are the A, AAAA or SRV records of one name.
 * Created by {@link DnsWorkerDiscoveryProvider}.
 *
 * <p><b>How it follows DNS.</b> It looks the name up, publishes the set, and looks it up again when
 * the answer's shortest TTL has passed, clamped to {@code [min-interval, max-interval]}; it
 * publishes again only when the set changed. An answer that says the name has no such records
 * (NOERROR, empty) is an empty set. A failure (NXDOMAIN, SERVFAIL, REFUSED, no answer within
 * {@code timeout}) is never an empty set: the listener hears {@code onError} (the resolver keeps the
 * last set, marked stale) and the lookup is retried with exponential backoff from
 * {@code min-interval} up to {@code max-interval}; the first good answer after it is published even
 * if nothing changed, which clears the stale mark. An SRV record whose target has no address, or
 * whose port is 0, is skipped with a WARN naming the record; the others are published.
 *
 * <p><b>Threads.</b> Everything happens on one daemon thread, {@code rollcall-dns-resolve}, so the
 * state needs no locks and the listener is called from that thread alone. {@link #start} returns
 * at once. A lookup never takes longer than {@code lookup-timeout}, each question in it no longer
 * than {@code timeout} (an SRV lookup asks two more per target not in the answer's additional
 * section, 16 at a time). A silent server is thus reported within {@code max-interval +
 * lookup-timeout}. dnsjava's own shared I/O thread
 * ({@code dnsjava NIO selector}) carries the packets; it is dnsjava's, shared by every user in the
 * JVM, and outlives {@link #close()}.
 */
final class DnsWorkerDiscovery implements WorkerDiscovery {

    static final String THREAD_NAME = "rollcall-dns-resolve";

    private static final Logger LOG = LoggerFactory.getLogger(DnsWorkerDiscovery.class);

    private final DnsSettings settings;
    private final Backoff backoff;

    // Lifecycle: written under lock by start() and close(); read by any thread.
    private final Object lock = new Object();
    private DaemonLoop loop;                    // guarded by lock
    private CandidateListener listener;         // written once under lock, before the loop starts
    private volatile boolean closed;

    // Loop state: touched only on the loop thread.
    private DnsLookup lookup;
    private Set<WorkerEndpoint> published;      // null until the first answer
    private boolean stale;                      // onError was called after the last publish
    private int failures;                       // lookups failed in a row
    private Set<String> warned = Set.of();      // skipped records already logged at WARN

    // Counters for status output and tests: written on the loop thread, read anywhere.
    private volatile int knownCount;
    private volatile Duration lastDelay = Duration.ZERO;
    private final AtomicLong lookups = new AtomicLong();

    DnsWorkerDiscovery(DnsSettings settings) {
        this.settings = settings;
        this.backoff = Backoff.of(settings.minInterval(), settings.maxInterval());
    }

    /** Starts the loop thread, which looks the name up at once and then on the TTL. Returns at once. */
    @Override
    public void start(CandidateListener candidateListener) {
        Objects.requireNonNull(candidateListener, "listener");
        synchronized (lock) {
            if (closed || loop != null) {
                throw new IllegalStateException(description() + " was already started or closed");
            }
            listener = candidateListener;
            loop = new DaemonLoop(THREAD_NAME);
            loop.execute(guarded(this::resolve));
        }
        LOG.debug("resolving {} on {}", settings.question(), settings.serverText());
    }

    // ---- on the loop thread ------------------------------------------------------------------

    private void resolve() {
        if (closed) {
            return;
        }
        Duration next;
        try {
            if (lookup == null) {
                lookup = new DnsLookup(settings);
            }
            lookups.incrementAndGet();
            Answer answer = lookup.lookup();
            if (closed) {
                return;
            }
            report(answer);
            next = settings.refreshDelay(answer.ttlSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // close() is stopping the loop
            return;
        } catch (LookupFailedException | RuntimeException e) {
            if (closed) {
                return;
            }
            next = failed(e);
        }
        lastDelay = next;
        schedule(next);
    }

    private void report(Answer answer) {
        if (failures > 0) {
            LOG.info("DNS lookup of {} on {} answers again after {} failures", settings.question(),
                    settings.serverText(), failures);
        }
        failures = 0;
        Set<String> nowSkipped = new HashSet<>(answer.skipped());
        for (String s : answer.skipped()) {
            if (warned.contains(s)) {
                LOG.debug("skipped again: {}", s);
            } else {
                LOG.warn("skipped {}", PeerText.escape(s, 1024));
            }
        }
        warned = Set.copyOf(nowSkipped);
        Set<WorkerEndpoint> set = answer.endpoints();
        if (published == null || stale || !published.equals(set)) {
            published = set;
            stale = false;
            knownCount = set.size();
            LOG.debug("{} on {}: {} workers, TTL {} s", settings.question(), settings.serverText(), set.size(),
                    answer.ttlSeconds());
            listener.onCandidates(set);
        }
    }

    /** Tells the listener (the last set stays, marked stale) and returns when to try again. */
    private Duration failed(Exception e) {
        failures++;
        String message = e instanceof LookupFailedException ? PeerText.escape(e.getMessage(), 1024)
                : "DNS lookup of " + settings.question() + " failed: " + PeerText.escape(e.toString());
        Duration delay = backoff.delay(failures);
        if (failures == 1) {
            LOG.warn("{}; keeping the last set, retrying in {} ms", message, delay.toMillis());
        } else {
            LOG.debug("{} (failure {}); retrying in {} ms", message, failures, delay.toMillis());
        }
        if (e instanceof RuntimeException) {
            LOG.error("unexpected failure in the DNS lookup of {}", settings.question(), e);
        }
        stale = true;
        listener.onError(e instanceof LookupFailedException ? e : new IllegalStateException(message, e));
        return delay;
    }

    private void schedule(Duration delay) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            try {
                loop.schedule(guarded(this::resolve), delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // Closed meanwhile.
            }
        }
    }

    /** A bug in one step must not end the loop silently: log it, and look up again later. */
    private Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("unexpected failure in the DNS lookup loop", e);
                schedule(settings.maxInterval());
            }
        };
    }

    // ---- any thread -------------------------------------------------------------------------

    /**
     * Stops the loop thread; no listener call happens after it returns (unless it is called from
     * the listener itself). Waits at most about one {@code timeout}. Idempotent; never throws.
     */
    @Override
    public void close() {
        DaemonLoop l;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            l = loop;
        }
        if (l == null) {
            return;
        }
        l.shutdownNow(); // interrupts a lookup in progress and drops the next one
        try {
            if (!l.awaitEnded(settings.lookupTimeout().toMillis() + 1000)) {
                LOG.warn("thread {} did not stop; it is a daemon and will not keep the JVM alive", THREAD_NAME);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.debug("stopped resolving {}", settings.question());
    }

    /** E.g. {@code dns[SRV _grpc._tcp.workers.example.com. on 10.0.0.2:53, 3 workers]}. */
    @Override
    public String description() {
        int n = knownCount;
        return "dns[" + settings.question() + " on " + settings.serverText() + ", " + n
                + (n == 1 ? " worker]" : " workers]");
    }

    @Override
    public String toString() {
        return description();
    }

    /** How many lookups were started. */
    long lookups() {
        return lookups.get();
    }

    /** The wait before the lookup after the last one: the clamped TTL, or the backoff after a failure. */
    Duration lastDelay() {
        return lastDelay;
    }
}
