package dev.rollcall.discovery.k8s;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.DaemonLoop;
import dev.rollcall.api.internal.NamedThreads;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code k8s} backend: a fabric8 informer on the {@code discovery.k8s.io/v1} EndpointSlices
 * labelled {@code kubernetes.io/service-name=<service>} in one namespace, turned into candidate
 * sets by {@link SliceCandidates}.
 *
 * <p><b>What it publishes.</b> Nothing until the first list of slices has succeeded; then the full
 * set, and again after every informer event or resync that changes it. Everything that reaches the
 * listener is computed from the informer's cache, so a relist (after {@code 410 Gone}) or a resync
 * loses nothing: the next set is simply the cache's current state.
 *
 * <p><b>Failures.</b> A failed list (API server unreachable, forbidden) or a watch that stays down
 * for longer than {@code staleAfter} is reported through {@link CandidateListener#onError}; the
 * informer keeps its cache and keeps retrying with backoff. When the watch is back the backend
 * publishes the full set again (even if unchanged), which clears the resolver's stale mark.
 *
 * <p><b>A silent API server.</b> A watch says nothing while nothing changes, so while it watches the
 * backend asks the API server {@code GET /version} every {@code keepalive-time} (on a client
 * thread). Any HTTP answer is a sign of life; none within {@code request-timeout} means the server
 * is hung or cut off: that is reported, and the informer is replaced by a new one on a new client,
 * which lists again once the server answers (publishing what changed meanwhile). A silent API
 * server is thus reported within {@code keepalive-time + request-timeout}.
 *
 * <p><b>Claimed versions.</b> With {@code version-label} set (the default), a second informer
 * follows the namespace's pods ({@link PodVersions}) and each candidate carries its pod's label as
 * {@link WorkerEndpoint#VERSION_LABEL}. The first set waits for both first lists; if the pods cannot
 * be listed (RBAC), that is logged once and candidates are published without a claimed version
 * until they can: the pods are an addition, never a reason to hold back the endpoints.
 *
 * <p><b>Threads.</b> One daemon thread, {@code rollcall-k8s-discovery}, builds the client, starts the
 * informer, checks the watch and calls the listener; HTTP and informer callbacks run on daemon
 * threads named {@code rollcall-k8s-client-N} (the JDK HTTP client adds its selector thread, and
 * fabric8 one shared scheduler thread for its backoff timers). The listener is never called
 * concurrently and never after {@link #close} returns.
 */
final class KubernetesWorkerDiscovery implements WorkerDiscovery {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesWorkerDiscovery.class);
    static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    private static final Duration MAX_CONNECT_BACKOFF = Duration.ofSeconds(30);

    private final KubernetesSettings options;
    private final String source;

    private final Object lock = new Object();
    private CandidateListener listener;          // guarded by lock
    private boolean started;                     // guarded by lock
    private boolean closed;                      // guarded by lock
    private DaemonLoop loop;                     // guarded by lock
    private ExecutorService clientExecutor;      // guarded by lock
    private KubernetesClient client;             // guarded by lock
    private SharedIndexInformer<EndpointSlice> informer;   // guarded by lock
    private PodVersions pods;                    // guarded by lock; null when version-label is off
    private Set<WorkerEndpoint> published;       // guarded by lock; null until the first publish
    private String failure;                      // guarded by lock; the error reported last, null when healthy

    // Touched only on the loop thread.
    private long generation;                    // bumped per client and informer; news of older ones is ignored
    private ScheduledFuture<?> watchChecks;
    private ScheduledFuture<?> signsOfLife;
    private boolean signOfLifePending;
    private boolean synced;
    private boolean podsSynced;                 // the pods' first list is done
    private boolean podsFailing;                // the pods could not be listed or watched: logged once
    private long notWatchingSince = -1;
    private volatile Set<String> lastProblems = Set.of();   // written on the loop only; read by tests
    private int connectAttempts;

    /** The client threads started, so that close() returns only once they have ended. */
    private final Queue<Thread> clientThreads = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean refreshQueued = new AtomicBoolean();
    private final AtomicBoolean apiEventPending = new AtomicBoolean();
    private final AtomicLong evaluations = new AtomicLong();
    private final AtomicLong signsOfLifeAsked = new AtomicLong();
    private volatile int knownCount;

    KubernetesWorkerDiscovery(KubernetesSettings options) {
        this.options = Objects.requireNonNull(options, "options");
        this.source = "service " + options.namespace() + "/" + options.service();
    }

    /**
     * Starts the backend's thread, which connects and starts the informer; returns at once.
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
            loop = new DaemonLoop("rollcall-k8s-discovery");
            loop.execute(this::connect);
        }
    }

    /** On the loop: builds the client and starts the informer; retried with backoff if that fails. */
    private void connect() {
        KubernetesClient newClient = null;
        ExecutorService newExecutor = null;
        long gen = ++generation;
        try {
            Config config = options.access().toConfig(options.namespace(), options.requestTimeout(),
                    options.timings().reconnectInterval());
            ThreadFactory named = NamedThreads.daemon("rollcall-k8s-client");
            newExecutor = Executors.newCachedThreadPool(r -> {
                Thread t = named.newThread(r);
                clientThreads.removeIf(old -> !old.isAlive());
                clientThreads.add(t);
                return t;
            });
            newClient = new KubernetesClientBuilder()
                    .withConfig(config)
                    .withHttpClientFactory(new NamedThreadsHttpClientFactory(newExecutor))
                    .withTaskExecutor(newExecutor)
                    .build();
            SharedIndexInformer<EndpointSlice> newInformer = newClient.discovery().v1().endpointSlices()
                    .inNamespace(options.namespace())
                    .withLabel(SERVICE_NAME_LABEL, options.service())
                    .runnableInformer(options.resync().toMillis());
            newInformer.addEventHandler(new SliceEvents());
            newInformer.exceptionHandler(this::onInformerException);
            PodVersions newPods = options.versionLabel() == null ? null : PodVersions.inform(newClient,
                    options.namespace(), options.versionLabel(), options.podSelector(), options.resync().toMillis(),
                    () -> queueRefresh(true), (isStarted, t) -> onPodsException(gen, t));
            synchronized (lock) {
                if (closed) {
                    newClient.close();
                    newExecutor.shutdownNow();
                    return;
                }
                client = newClient;
                clientExecutor = newExecutor;
                informer = newInformer;
                pods = newPods;
            }
            LOG.info("k8s discovery: watching the EndpointSlices of {} through {}{}", source, options.access().describe(),
                    newPods == null ? "" : ", and the label " + newPods.label() + " of its namespace's pods"
                            + (options.podSelector().isEmpty() ? "" : " " + options.podSelector()));
            if (newPods != null) {
                newPods.start().whenComplete((ignored, error) -> onLoop(() -> onPodsSynced(gen, error)));
            }
            newInformer.start().whenComplete((ignored, error) -> onLoop(() -> onSynced(gen, error)));
            long check = options.timings().watchCheck().toMillis();
            watchChecks = loop.scheduleWithFixedDelay(this::checkWatch, check, check, TimeUnit.MILLISECONDS);
            long every = options.keepaliveTime().toNanos();
            signsOfLife = loop.scheduleWithFixedDelay(() -> askForSignOfLife(gen), every, every, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            if (newClient != null) {
                newClient.close();
            }
            if (newExecutor != null) {
                newExecutor.shutdownNow();
            }
            long delay = Math.min(MAX_CONNECT_BACKOFF.toMillis(),
                    options.timings().reconnectInterval().toMillis() << Math.min(connectAttempts++, 5));
            reportFailure("cannot set up the Kubernetes client for " + source + " (" + options.access().describe()
                    + "): " + message(e, options.requestTimeout()) + "; retrying in " + delay + " ms", e);
            try {
                loop.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                // closed meanwhile
            }
        }
    }

    /** On the loop: the first list succeeded (or the informer was stopped before it did). */
    private void onSynced(long gen, Throwable error) {
        if (gen != generation) {
            return;     // a replaced informer: its store is not the one refresh() reads
        }
        if (error != null) {
            LOG.debug("k8s discovery: informer for {} stopped before its first list", source, error);
            return;
        }
        synced = true;
        refresh(Trigger.SYNCED);
    }

    /** On the loop: the pods' first list succeeded; the first set may go out now. */
    private void onPodsSynced(long gen, Throwable error) {
        if (gen != generation || error != null) {
            return;
        }
        podsSynced = true;
        if (podsFailing) {
            podsFailing = false;
            LOG.info("k8s discovery: reading the pods' label {} for {} again", options.versionLabel(), source);
        }
        refresh(Trigger.SYNCED);
    }

    /**
     * Called by fabric8 when listing or watching the pods fails: logged once, and the candidates
     * go out without a claimed version rather than not at all. fabric8 keeps retrying.
     */
    private boolean onPodsException(long gen, Throwable t) {
        onLoop(() -> {
            if (gen != generation || podsFailing) {
                return;
            }
            podsFailing = true;
            LOG.warn("k8s discovery: cannot list or watch the pods of namespace {} for their label {} ({}; the account"
                    + " needs list and watch on pods, or set version-label=none): {}; retrying", options.namespace(),
                    options.versionLabel(), message(t, options.requestTimeout()), podsSynced
                            ? "the claimed versions may be out of date until it can"
                            : "candidates carry no claimed version until it can");
            refresh(Trigger.SYNCED);
        });
        return true;
    }

    /** Called by fabric8 when a list or watch fails in a way it does not retry by itself. */
    private boolean onInformerException(boolean isStarted, Throwable t) {
        synchronized (lock) {
            if (closed) {
                return false;
            }
        }
        onLoop(() -> reportFailure("cannot list or watch the EndpointSlices of " + source + " at "
                + options.access().describe() + ": " + message(t, options.requestTimeout()) + "; retrying", t));
        return true;    // keep retrying: an API server that comes back, or RBAC that gets fixed, must be picked up
    }

    /** On the loop: reports a watch that has been down for too long, and publishes when it is back. */
    private void checkWatch() {
        SharedIndexInformer<EndpointSlice> current;
        boolean failing;
        synchronized (lock) {
            current = informer;
            failing = failure != null;
        }
        if (current == null || !synced) {
            return;     // errors before the first list come from the exception handler
        }
        if (current.isWatching()) {
            notWatchingSince = -1;
            if (failing) {
                refresh(Trigger.RECOVERED);
            }
            return;
        }
        long now = System.nanoTime();
        if (notWatchingSince < 0) {
            notWatchingSince = now;
        } else if (!failing && now - notWatchingSince >= options.timings().staleAfter().toNanos()) {
            reportFailure("lost the watch on the EndpointSlices of " + source + " at " + options.access().describe()
                    + " for " + Duration.ofNanos(now - notWatchingSince).toMillis() + " ms; reconnecting", null);
        }
    }

    /**
     * On the loop, every {@code keepalive-time} once the informer has listed: asks the API server
     * {@code GET /version} on a client thread. A watch is silent while nothing changes, so only an
     * unanswered request tells a server gone silent from a quiet service.
     */
    private void askForSignOfLife(long gen) {
        if (gen != generation || !synced || signOfLifePending) {
            return;
        }
        KubernetesClient c;
        ExecutorService ex;
        synchronized (lock) {
            if (closed) {
                return;
            }
            c = client;
            ex = clientExecutor;
        }
        if (c == null || ex == null) {
            return;
        }
        signOfLifePending = true;
        signsOfLifeAsked.incrementAndGet();
        try {
            ex.execute(() -> {
                Throwable silence = null;
                try {
                    c.getKubernetesVersion();
                } catch (KubernetesClientException e) {
                    silence = e.getCode() > 0 ? null : e;   // any HTTP answer, even an error status, is a sign of life
                } catch (RuntimeException e) {
                    silence = e;
                }
                Throwable result = silence;
                onLoop(() -> onSignOfLife(gen, result));
            });
        } catch (RejectedExecutionException closing) {
            signOfLifePending = false;
        }
    }

    /** On the loop: a server that did not answer is reported, and a new informer on a new client replaces the old. */
    private void onSignOfLife(long gen, Throwable silence) {
        if (gen != generation) {
            return;
        }
        signOfLifePending = false;
        if (silence == null) {
            return;
        }
        reportFailure("the API server at " + options.access().describe() + " did not answer GET /version within "
                + options.requestTimeout().toMillis() + " ms (request-timeout) while watching the EndpointSlices of "
                + source + ": it is hung or cut off (" + message(silence, options.requestTimeout())
                + "); reconnecting", silence);
        reconnect();
    }

    /** On the loop: drops the client and its informer (their news is ignored from now on) and connects anew. */
    private void reconnect() {
        SharedIndexInformer<EndpointSlice> oldInformer;
        PodVersions oldPods;
        KubernetesClient oldClient;
        ExecutorService oldExecutor;
        synchronized (lock) {
            if (closed) {
                return;
            }
            oldInformer = informer;
            oldPods = pods;
            oldClient = client;
            oldExecutor = clientExecutor;
            informer = null;
            pods = null;
            client = null;
            clientExecutor = null;
        }
        generation++;
        synced = false;
        podsSynced = false;
        podsFailing = false;
        notWatchingSince = -1;
        signOfLifePending = false;
        if (watchChecks != null) {
            watchChecks.cancel(false);
        }
        if (signsOfLife != null) {
            signsOfLife.cancel(false);
        }
        release(oldInformer, oldPods, oldClient, oldExecutor);
        try {
            loop.schedule(this::connect, options.timings().reconnectInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    private void release(SharedIndexInformer<EndpointSlice> oldInformer, PodVersions oldPods,
                         KubernetesClient oldClient, ExecutorService oldExecutor) {
        try {
            if (oldInformer != null) {
                oldInformer.stop();
            }
            if (oldPods != null) {
                oldPods.stop();
            }
            if (oldClient != null) {
                oldClient.close();
            }
        } catch (RuntimeException e) {
            LOG.debug("k8s discovery: closing a client for {} failed", source, e);
        }
        if (oldExecutor != null) {
            oldExecutor.shutdownNow();
        }
    }

    /** Why the cache is evaluated; it decides whether an unchanged set is published again. */
    private enum Trigger {
        /** The first list succeeded: always publish, even an empty set. */
        SYNCED,
        /** The watch is back after a reported failure: publish even if unchanged, to clear the stale mark. */
        RECOVERED,
        /** An add, update or delete that came from the API server (watch or re-list): publish if changed. */
        API_EVENT,
        /** The informer's periodic resync re-delivered its cache: publish if changed, but not while failing. */
        RESYNC
    }

    /** From any thread: schedules one evaluation of the cache, coalescing bursts of events. */
    private void queueRefresh(boolean fromApi) {
        if (fromApi) {
            apiEventPending.set(true);
        }
        if (refreshQueued.compareAndSet(false, true)) {
            onLoop(() -> {
                refreshQueued.set(false);
                refresh(apiEventPending.getAndSet(false) ? Trigger.API_EVENT : Trigger.RESYNC);
            });
        }
    }

    /** On the loop: computes the set from the informer's cache and publishes it when {@code trigger} calls for it. */
    private void refresh(Trigger trigger) {
        SharedIndexInformer<EndpointSlice> current;
        PodVersions versions;
        synchronized (lock) {
            current = informer;
            versions = pods;
        }
        if (current == null || !synced || (versions != null && !podsSynced && !podsFailing)) {
            return;     // the first set waits for the pods' first list too, unless they cannot be listed
        }
        evaluations.incrementAndGet();
        List<EndpointSlice> slices = current.getStore().list();
        SliceCandidates.Result result = SliceCandidates.of(slices, options.port(), options.tls(), options.ipFamily(),
                versions);
        Set<String> problems = Set.copyOf(result.problems());
        for (String problem : result.problems()) {
            if (!lastProblems.contains(problem)) {
                LOG.warn("k8s discovery: {}; keeping the others", problem);
            }
        }
        lastProblems = problems;
        synchronized (lock) {
            if (closed) {
                return;
            }
            boolean recovering = failure != null;
            boolean changed = !result.endpoints().equals(published);
            boolean publish = switch (trigger) {
                case SYNCED, RECOVERED -> true;
                // Data that just came from the API server is fresh even if the watch is not back yet.
                case API_EVENT -> changed;
                // The cache alone cannot clear the stale mark: while failing it may be out of date.
                case RESYNC -> changed && !recovering;
            };
            if (!publish) {
                return;
            }
            LOG.info("k8s discovery: {} candidate endpoint{} from {} ({} slice{}{}){}", result.endpoints().size(),
                    result.endpoints().size() == 1 ? "" : "s", source, slices.size(), slices.size() == 1 ? "" : "s",
                    problems.isEmpty() ? "" : ", " + problems.size() + " skipped",
                    recovering ? " (API server reachable again)" : "");
            LOG.debug("k8s discovery candidates: {}", result.endpoints());
            published = result.endpoints();
            failure = null;
            notWatchingSince = -1;      // the data is fresh: the staleness clock starts again
            knownCount = published.size();
            listener.onCandidates(published);
        }
    }

    /** On the loop: tells the listener, once per distinct failure until the next publish. */
    private void reportFailure(String message, Throwable cause) {
        synchronized (lock) {
            if (closed || message.equals(failure)) {
                return;
            }
            boolean first = failure == null;
            failure = message;
            if (first) {
                LOG.warn("k8s discovery: {}; {}", message, published == null ? "no candidates until it succeeds"
                        : "the last " + published.size() + " candidates stay in use");
            } else {
                LOG.debug("k8s discovery: {}", message);
            }
            listener.onError(new IOException(message, cause));
        }
    }

    private void onLoop(Runnable task) {
        ScheduledExecutorService l;
        synchronized (lock) {
            l = closed ? null : loop;
        }
        if (l == null) {
            return;
        }
        try {
            l.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warn("k8s discovery: unexpected failure for {}", source, e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    /** Stops the informer, closes the client and stops every thread. Idempotent; never throws. */
    @Override
    public void close() {
        SharedIndexInformer<EndpointSlice> toStop;
        PodVersions podsToStop;
        KubernetesClient toClose;
        ExecutorService executor;
        DaemonLoop l;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            toStop = informer;
            podsToStop = pods;
            toClose = client;
            executor = clientExecutor;
            l = loop;
        }
        release(toStop, podsToStop, toClose, executor);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (Thread t : clientThreads) {
            if (t == Thread.currentThread()) {
                continue;   // closed from a client thread: it ends when this call returns
            }
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (t.isAlive()) {
                LOG.warn("k8s discovery: thread {} for {} did not stop within 5 s", t.getName(), source);
            }
        }
        if (l != null) {
            l.shutdownNow();
            try {
                if (!l.awaitEnded(5_000)) {
                    LOG.warn("k8s discovery: thread for {} did not stop within 5 s", source);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** E.g. {@code k8s[prod/workers, port grpc, 3 endpoints]}. */
    @Override
    public String description() {
        int n = knownCount;
        String family = options.ipFamily() == IpFamily.DEFAULT ? "" : options.ipFamily() + ", ";
        return "k8s[" + options.namespace() + "/" + options.service() + ", " + options.port().describe() + ", "
                + family + n + (n == 1 ? " endpoint" : " endpoints") + "]";
    }

    @Override
    public String toString() {
        return description();
    }

    /** How many times the cache was evaluated: lets tests tell "looked and found no change" from "not yet looked". */
    long evaluations() {
        return evaluations.get();
    }

    /** A short reason: the HTTP status for API errors, else the root cause (e.g. "ConnectException: Connection refused"). */
    private static String message(Throwable t, Duration requestTimeout) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            // Before the root cause: a timed-out request's root cause is only the closed connection.
            if (c instanceof java.net.http.HttpTimeoutException || c instanceof java.net.SocketTimeoutException) {
                return "no answer within " + requestTimeout.toMillis() + " ms (request-timeout)";
            }
            if (c instanceof KubernetesClientException kce && kce.getCode() > 0) {
                String status = kce.getStatus() == null ? null : kce.getStatus().getMessage();
                String hint = kce.getCode() == 401 || kce.getCode() == 403
                        ? " (the account needs list and watch on endpointslices.discovery.k8s.io in this namespace)"
                        : "";
                return "HTTP " + kce.getCode() + (status == null ? "" : " " + PeerText.escape(status)) + hint;
            }
            if (c.getCause() == null || c.getCause() == c) {
                return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : ": " + PeerText.escape(c.getMessage()));
            }
        }
        return String.valueOf(t);
    }

    /** Informer callbacks, on a client thread: only schedule an evaluation of the cache. */
    private final class SliceEvents implements ResourceEventHandler<EndpointSlice> {
        @Override
        public void onAdd(EndpointSlice slice) {
            queueRefresh(true);
        }

        @Override
        public void onUpdate(EndpointSlice before, EndpointSlice after) {
            // A resync re-delivers the cached object as its own update.
            queueRefresh(before != after && !Objects.equals(version(before), version(after)));
        }

        @Override
        public void onDelete(EndpointSlice slice, boolean finalStateUnknown) {
            queueRefresh(true);
        }

        private static String version(EndpointSlice slice) {
            return slice == null || slice.getMetadata() == null ? null : slice.getMetadata().getResourceVersion();
        }
    }

    /** How many sign-of-life requests were sent. */
    long signsOfLifeAsked() {
        return signsOfLifeAsked.get();
    }

    /** The problems seen by the last evaluation; for tests. */
    Set<String> problems() {
        return lastProblems;
    }
}
