package dev.rollcall.discovery.consul;

import dev.rollcall.api.Backoff;
import com.ecwid.consul.transport.HttpResponse;
import com.ecwid.consul.v1.ConsulRawClient;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.DaemonLoop;
import dev.rollcall.api.internal.NamedThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.http.impl.client.CloseableHttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the instances of one Consul service with blocking health queries on a daemon thread
 * named {@value #THREAD_NAME}, and publishes them as the full candidate set. Created by
 * {@link ConsulWorkerDiscoveryProvider}.
 *
 * <p>The first query does not block; each next one carries the last {@code X-Consul-Index} and
 * {@code wait}, so Consul answers as soon as the service changes, or after {@code wait} (plus its
 * jitter) when nothing did. The index follows {@link BlockingIndex}'s rules. A set is published
 * when it differs from the last one, and after a failure even when it does not (it clears the
 * resolver's stale mark).
 *
 * <p>Every query, whatever the reason for it, takes a token of a {@link QueryRateLimit} first, so
 * that a service that changes all the time is polled at a bounded rate.
 *
 * <p>On a failure (agent unreachable, a non-200 answer, a body that is not a JSON array) the
 * listener's {@code onError} is called (once per distinct reason), the loop backs off with jitter,
 * and resumes with the index it had: an agent that comes back with its state answers at once
 * only if something changed meanwhile. A malformed entry is skipped and logged with the reason;
 * the others are published.
 *
 * <p><b>A silent agent.</b> A blocking query says nothing for up to {@code wait} by design, so
 * while one is under way a second daemon thread, {@value #KEEPALIVE_THREAD_NAME}, asks the agent
 * {@code GET /v1/status/leader} every {@code keepalive-time} on a connection of its own. Any HTTP
 * answer is a sign of life; none within {@code request-timeout} means the agent is hung or cut off:
 * the query is aborted (its connection closed) and reported, and the loop retries as after any
 * failure. A silent agent is thus reported within {@code keepalive-time + request-timeout}.
 *
 * <p><b>Answers</b> are read up to {@code max-response-bytes} ({@link BoundedAnswers}); a larger
 * one is a failure naming the limit and its key, and the last set stays.
 *
 * <p>Thread-safe. The listener is called from the watch thread only, and never after
 * {@link #close()} returns.
 */
final class ConsulWorkerDiscovery implements WorkerDiscovery {

    static final String THREAD_NAME = "rollcall-consul-watch";
    static final String KEEPALIVE_THREAD_NAME = THREAD_NAME + "-keepalive";
    static final String LEADER_PATH = "/v1/status/leader";
    /** Consul sets it on a read whose results its ACLs filtered (for tokens other than the anonymous one). */
    static final String RESULTS_FILTERED_HEADER = "X-Consul-Results-Filtered-By-ACLs";

    private static final Logger LOG = LoggerFactory.getLogger(ConsulWorkerDiscovery.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);
    /**
     * The wait of the first query after a failure. It resumes with the index it had, so if nothing
     * changed meanwhile it would block for the whole configured wait (5 minutes by default) while
     * the resolver marks the set stale; with a second it answers at once with the same set, which
     * is published again and clears the stale mark.
     */
    static final Duration RECOVERY_WAIT = Duration.ofSeconds(1);

    private final ConsulSettings connection;
    private final HealthQuery query;
    private final Backoff backoff;
    private final String path;

    private final Object lock = new Object();
    private final CountDownLatch closing = new CountDownLatch(1);
    private CandidateListener listener;         // guarded by lock
    private Thread thread;                      // guarded by lock
    private CloseableHttpClient http;           // guarded by lock; replaced when a silent query is aborted
    private ConsulRawClient raw;                // guarded by lock; over http
    private DaemonLoop keepalive;               // guarded by lock
    private CloseableHttpClient keepaliveHttp;  // guarded by lock
    private long queryInFlight;                 // guarded by lock: the number of the query under way, 0 when none
    private String abortedBecause;              // guarded by lock: why the query under way was aborted
    private boolean closed;                     // guarded by lock
    private Set<WorkerEndpoint> published;      // guarded by lock
    private String failure;                     // guarded by lock: the reported reason, null when healthy
    private volatile int knownCount;

    // Touched only by the watch thread (the response interceptor runs on the thread that sent the request).
    private Set<String> lastSkipped = Set.of();
    private boolean filteredByAcls;

    /** Health queries sent, so that tests can tell a blocking loop from a spinning one. */
    private final AtomicLong queries = new AtomicLong();
    private final AtomicLong signsOfLifeAsked = new AtomicLong();

    ConsulWorkerDiscovery(ConsulSettings connection, HealthQuery query) {
        this.connection = connection;
        this.query = query;
        this.backoff = Backoff.of(query.backoffInitial(), query.backoffMax());
        this.path = "/v1/health/service/" + connection.service();
    }

    /**
     * Starts the watch thread and returns at once; the first set is published when Consul has
     * answered.
     *
     * @throws IllegalStateException when called a second time or after {@link #close}
     */
    @Override
    public void start(CandidateListener listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (lock) {
            if (thread != null || closed) {
                throw new IllegalStateException(description() + " was already " + (closed ? "closed" : "started"));
            }
            this.listener = listener;
            newQueryClient();
            keepaliveHttp = connection.newHttpClient(connection.requestTimeout());
            thread = NamedThreads.daemonNamed(THREAD_NAME).newThread(this::run);
            keepalive = new DaemonLoop(KEEPALIVE_THREAD_NAME);
            long every = query.keepaliveTime().toNanos();
            keepalive.scheduleWithFixedDelay(this::askForSignOfLife, every, every, TimeUnit.NANOSECONDS);
            thread.start();
        }
    }

    /** A fresh HTTP client for the health queries; under lock. */
    private void newQueryClient() {
        http = connection.newHttpClient(query.readTimeout(connection.requestTimeout()),
                (response, context) -> {
                    if (response.containsHeader(RESULTS_FILTERED_HEADER)) {
                        filteredByAcls = "true".equalsIgnoreCase(
                                response.getFirstHeader(RESULTS_FILTERED_HEADER).getValue().strip());
                    }
                });
        raw = connection.rawClient(http);
    }

    private void run() {
        synchronized (lock) {
            if (closed) {
                return;
            }
        }
        LOG.debug("watching {}", description());
        long number = 0;
        long index = 0;
        int failures = 0;
        int stalls = 0;
        QueryRateLimit rateLimit = new QueryRateLimit(query.rateLimitInterval().toNanos(), query.rateLimitBurst(),
                System::nanoTime);
        while (!isClosed()) {
            long limited = rateLimit.reserveNanos();
            if (limited > 0) {
                LOG.debug("consul: service '{}' keeps changing; next query in {} ms (rate limit)",
                        connection.service(), TimeUnit.NANOSECONDS.toMillis(limited));
                pause(limited);
                if (isClosed()) {
                    break;
                }
            }
            long sent = index;
            Duration wait = failures > 0 && RECOVERY_WAIT.compareTo(query.waitTime()) < 0 ? RECOVERY_WAIT
                    : query.waitTime();
            long began = System.nanoTime();
            HttpResponse response;
            ConsulRawClient client;
            synchronized (lock) {
                client = raw;
                queryInFlight = ++number;
                abortedBecause = null;
            }
            String aborted;
            try {
                queries.incrementAndGet();
                filteredByAcls = false;
                response = client.makeGetRequest(path, query.parameters(sent, wait));
            } catch (RuntimeException e) {
                synchronized (lock) {
                    queryInFlight = 0;
                    aborted = abortedBecause;
                }
                if (isClosed()) {
                    break;
                }
                failures++;
                BoundedAnswers.TooLarge tooLarge = tooLarge(e);
                reportFailure(aborted != null ? aborted : tooLarge != null ? tooLarge.getMessage()
                        : "cannot reach it: " + reason(e), e);
                pause(backoff.delayNanos(failures));
                continue;
            }
            synchronized (lock) {
                queryInFlight = 0;
            }
            if (response.getStatusCode() != 200) {
                failures++;
                reportFailure(httpProblem(response), null);
                pause(backoff.delayNanos(failures));
                continue;
            }
            HealthEntries.Parsed parsed;
            try {
                parsed = HealthEntries.parse(response.getContent(), connection.versionMeta().orElse(null));
            } catch (RuntimeException e) {     // IllegalArgumentException: not a JSON array
                failures++;
                reportFailure(e instanceof IllegalArgumentException ? e.getMessage() : "cannot read the answer: " + e, e);
                pause(backoff.delayNanos(failures));
                continue;
            }
            if (filteredByAcls) {
                // A 200 that ACLs thinned out is not the set: publishing it would retire healthy workers.
                failures++;
                reportFailure(aclProblem(parsed), null);
                pause(backoff.delayNanos(failures));
                continue;
            }
            failures = 0;
            long returned = response.getConsulIndex() == null ? 0 : response.getConsulIndex();
            logSkipped(parsed);
            publish(parsed.endpoints(), returned);

            index = BlockingIndex.next(sent, returned);
            if (BlockingIndex.wentBackwards(sent, returned)) {
                LOG.info("consul: the index of service '{}' went backwards from {} to {} (snapshot restore or a new "
                        + "cluster?); starting over with a fresh query", connection.service(),
                        Long.toUnsignedString(sent), Long.toUnsignedString(returned));
            }
            if (BlockingIndex.returnedEarlyWithoutChange(sent, returned, System.nanoTime() - began, wait.toNanos())) {
                stalls++;
                long delay = backoff.delayNanos(stalls);
                LOG.debug("consul: a blocking query on '{}' returned early with index {} (sent {}); waiting {} ms",
                        connection.service(), Long.toUnsignedString(returned), Long.toUnsignedString(sent),
                        TimeUnit.NANOSECONDS.toMillis(delay));
                pause(delay);
            } else {
                stalls = 0;
            }
        }
        LOG.debug("stopped watching {}", description());
    }

    /**
     * On the keepalive thread: while a query is under way, asks the agent for a sign of life on a
     * connection of its own; if none comes within {@code request-timeout}, aborts that query.
     */
    private void askForSignOfLife() {
        long number;
        CloseableHttpClient probe;
        synchronized (lock) {
            if (closed || queryInFlight == 0) {
                return;
            }
            number = queryInFlight;
            probe = keepaliveHttp;
        }
        signsOfLifeAsked.incrementAndGet();
        try {
            // Any HTTP answer, whatever its status, is a sign of life; only silence or a failed connection is not.
            connection.rawClient(probe).makeGetRequest(LEADER_PATH, List.of());
        } catch (RuntimeException e) {
            abortSilentQuery(number, timedOut(e) ? "the agent did not answer GET " + LEADER_PATH + " within "
                    + connection.requestTimeout().toMillis() + " ms (request-timeout) while a query waited: it is hung"
                    + " or cut off" : "cannot reach it: " + reason(e));
        }
    }

    /** Fails the query under way, if it is still {@code number}, by closing its connection; the next one gets a fresh client. */
    private void abortSilentQuery(long number, String why) {
        CloseableHttpClient old;
        synchronized (lock) {
            if (closed || queryInFlight != number) {
                return;     // it ended meanwhile: it answered after all, or failed by itself
            }
            abortedBecause = why;
            old = http;
            newQueryClient();
        }
        LOG.debug("consul: aborting the query on service '{}' at {}: {}", connection.service(), connection.address(), why);
        closeQuietly(old);
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException || t instanceof org.apache.http.conn.ConnectTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static BoundedAnswers.TooLarge tooLarge(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof BoundedAnswers.TooLarge tooLarge) {
                return tooLarge;
            }
        }
        return null;
    }

    private void closeQuietly(CloseableHttpClient client) {
        if (client == null) {
            return;
        }
        try {
            client.close();     // fails a blocked read at once
        } catch (IOException e) {
            LOG.debug("closing an HTTP client of {} failed", description(), e);
        }
    }

    private void publish(Set<WorkerEndpoint> latest, long index) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            boolean recovering = failure != null;
            if (!recovering && latest.equals(published)) {
                return;
            }
            if (recovering) {
                LOG.info("consul: watch of service '{}' at {} recovered: {} instance{}", connection.service(),
                        connection.address(), latest.size(), latest.size() == 1 ? "" : "s");
            } else {
                LOG.info("consul: service '{}' has {} {}instance{} (index {})", connection.service(), latest.size(),
                        query.passingOnly() ? "healthy " : "", latest.size() == 1 ? "" : "s",
                        Long.toUnsignedString(index));
            }
            LOG.debug("consul candidates: {}", latest);
            published = latest;
            failure = null;
            knownCount = latest.size();
            try {
                listener.onCandidates(latest);
            } catch (RuntimeException e) {
                // The listener's bug must not end the watch: the next change is published as usual.
                LOG.error("the candidate listener of {} failed", description(), e);
            }
        }
    }

    /** Each skipped entry is logged at WARN once, while it stays malformed; again only if it comes back. */
    private void logSkipped(HealthEntries.Parsed parsed) {
        Set<String> now = new HashSet<>(parsed.skipped());
        for (String reason : parsed.skipped()) {
            if (lastSkipped.contains(reason)) {
                LOG.debug("consul: still skipping service '{}' {}", connection.service(), reason);
            } else {
                LOG.warn("consul: skipping a malformed instance of service '{}' at {}, keeping the others: {}",
                        connection.service(), connection.address(), reason);
            }
        }
        for (String down : parsed.nodeDown()) {
            LOG.debug("consul: service '{}': leaving out {}", connection.service(), down);
        }
        for (String duplicate : parsed.duplicates()) {
            LOG.debug("consul: service '{}': {}; keeping the first", connection.service(), duplicate);
        }
        lastSkipped = now;
    }

    private void reportFailure(String why, Throwable cause) {
        String message = "consul health query for service '" + connection.service() + "' at " + connection.address()
                + " failed: " + why;
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (message.equals(failure)) {
                LOG.debug("{} (again)", message);
                return;
            }
            failure = message;
            LOG.warn("{}; keeping the last known instances and retrying with backoff", message);
            try {
                listener.onError(new IOException(message, cause));
            } catch (RuntimeException e) {
                LOG.error("the candidate listener of {} failed", description(), e);
            }
        }
    }

    private String httpProblem(HttpResponse response) {
        int status = response.getStatusCode();
        String body = response.getContent() == null ? "" : PeerText.escape(response.getContent().strip(), 200);
        String what = "HTTP " + status + (body.isEmpty() ? "" : " (" + body + ")");
        if (status == 403) {
            // Consul filters reads the token may not see (200, see aclProblem); 403 means the token itself is unknown.
            return what + ": the ACL token " + (connection.hasToken() ? "was refused (unknown, expired or deleted?)"
                    : "is missing") + "; it needs service:read on '" + connection.service() + "' and node:read";
        }
        return what;
    }

    /** Which permission the token lacks, as far as the filtered answer tells; never the token. */
    private String aclProblem(HealthEntries.Parsed parsed) {
        String service = connection.service();
        String what = "Consul filtered the answer by ACLs (" + RESULTS_FILTERED_HEADER + ": true): ";
        if (parsed.endpoints().isEmpty() && parsed.skipped().isEmpty()) {
            return what + "it left out every instance; the ACL token lacks service:read on '" + service
                    + "' or node:read on the nodes of its instances (a coordinator's token needs both)";
        }
        return what + "it left out some instances; the ACL token has service:read on '" + service
                + "' but lacks node:read on some of the nodes of its instances";
    }

    private static String reason(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + PeerText.escape(message));
    }

    private void pause(long nanos) {
        try {
            closing.await(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /**
     * Stops the watch: aborts the query in flight (closing its connection), waits briefly for the
     * thread to end. Idempotent; never throws.
     */
    @Override
    public void close() {
        Thread t;
        CloseableHttpClient client;
        CloseableHttpClient probe;
        DaemonLoop k;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            client = http;
            probe = keepaliveHttp;
            k = keepalive;
        }
        closing.countDown();
        if (k != null) {
            k.shutdownNow();
        }
        closeQuietly(client);
        closeQuietly(probe);
        join(t, THREAD_NAME);
        if (k != null) {
            try {
                if (!k.awaitEnded(STOP_WAIT.toMillis())) {
                    warnStillRunning(KEEPALIVE_THREAD_NAME);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Returns once {@code t} has ended (or after {@link #STOP_WAIT}, with a WARN). */
    private void join(Thread t, String name) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(STOP_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            warnStillRunning(name);
        }
    }

    private void warnStillRunning(String name) {
        LOG.warn("thread {} of {} did not stop within {}; it is a daemon and will not keep the JVM alive",
                name, description(), STOP_WAIT);
    }

    /** E.g. {@code consul[service=workers at http://127.0.0.1:8500, tag=prod, 3 endpoints]}; no token. */
    @Override
    public String description() {
        int n = knownCount;
        return "consul[service=" + connection.service() + " at " + connection.address() + query.filters() + ", "
                + n + (n == 1 ? " endpoint" : " endpoints") + "]";
    }

    @Override
    public String toString() {
        return description();
    }

    long queriesSent() {
        return queries.get();
    }

    long signsOfLifeAsked() {
        return signsOfLifeAsked.get();
    }
}
