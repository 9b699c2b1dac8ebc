package dev.rollcall.discovery.etcd;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.CandidateSet;
import dev.rollcall.api.discovery.KeyedCandidates;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.DaemonLoop;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code etcd} discovery backend: the workers are the keys under a prefix. Created by
 * {@link EtcdWorkerDiscoveryProvider}.
 *
 * <p><b>How it follows etcd.</b> It reads the whole prefix once (in pages of {@code page-size}
 * keys, all at one revision), publishes that set, and watches the prefix from the revision after
 * the read, so that no change between the read and the watch is lost; after each watch response that changes the set it publishes the full set again. When the
 * watch breaks or etcd cannot be reached it tells the listener ({@code onError}: the resolver keeps
 * the last set, marked stale), and reconnects with exponential backoff on a fresh connection,
 * resuming the watch from the revision after the last one it applied: changes made while it was
 * away arrive as ordinary watch events. If etcd has compacted that revision away, it reads the
 * whole prefix again instead. A value that is not a valid worker description is skipped with a
 * WARN naming its key (key and reason escaped with {@link PeerText}); the other keys are published.
 *
 * <p><b>A silent etcd.</b> A watch says nothing while nothing changes, so while it is established
 * the backend reads one key every {@code keepalive-time} over the same connection; one unanswered
 * within {@code request-timeout} counts as a broken watch. A silent etcd is thus reported within
 * {@code keepalive-time + request-timeout}.
 *
 * <p><b>Threads.</b> Connecting, reading, timers and failures happen on one daemon thread,
 * {@code rollcall-etcd-watch}. A watch response is applied where jetcd delivers it, on its own
 * callback thread, when that thread is idle and no earlier response waits for it (a change costs
 * about the square root of the fleet's size: see {@link KeyedCandidates}); otherwise it is handed to
 * that thread, behind the ones before it. Either way the state is touched under one lock, never
 * waited for on jetcd's thread, responses are applied in the order etcd sent them, and the
 * listener is called from one thread at a time. A hand-off per event would cost a wake-up of the
 * loop thread on every put's way to a snapshot, and a busy machine makes that wake-up late.
 * {@link #start} returns at once. Every call to etcd has a deadline, so the thread never
 * waits on the network for longer than {@code request-timeout} (plus {@code connect-timeout} to
 * connect).
 */
final class EtcdWorkerDiscovery implements WorkerDiscovery {

    static final String THREAD_NAME = "rollcall-etcd-watch";

    private static final Logger LOG = LoggerFactory.getLogger(EtcdWorkerDiscovery.class);

    /**
     * After a watch resumes, how long to wait for the events missed while away before publishing
     * (which clears the resolver's stale mark) anyway. etcd sends them within about 100 ms.
     */
    static final Duration CATCH_UP_WINDOW = Duration.ofMillis(500);

    /**
     * How long a replaced client stays open. jetcd retries a broken watch by itself 500 ms after
     * the error, on the client's own executor; closing the client while that retry ran shut the
     * executor down under it, and Guava logged a SEVERE RejectedExecutionException through
     * java.util.logging on every reconnect (our default backoff is 500 ms too).
     */
    static final Duration RETIRE_GRACE = Duration.ofSeconds(2);

    private final EtcdSettings settings;
    private final ByteSequence prefix;
    private final ByteSequence prefixEnd;
    private final dev.rollcall.api.Backoff backoff;
    private final Object lock = new Object();
    /** Held while the loop state below is touched, on the loop thread or, for a watch response, on jetcd's. */
    private final ReentrantLock state = new ReentrantLock();
    /** Watch responses handed to the loop thread and not applied yet: until none is, later ones follow them there. */
    private final AtomicInteger responsesQueued = new AtomicInteger();
    private DaemonLoop loop;                    // guarded by lock
    private CandidateListener listener;         // written once under lock, before the loop starts
    private volatile boolean closed;

    // Loop state: touched only under the state lock (on the loop thread, or on jetcd's for a watch response).
    private Client client;
    private Watch.Watcher watcher;
    private long session;                       // bumped per watch; callbacks of older ones are ignored
    private boolean established;
    private ScheduledFuture<?> pending;         // the next connect, a catch-up publish or a creation check
    /** The workers by key, and the candidate set they make (kept up to date one event at a time). */
    private final KeyedCandidates entries = new KeyedCandidates();
    private long revision;                      // the entries reflect every change up to this revision
    private boolean needFullRead = true;
    private boolean freshConnection;            // the next attempt replaces the client
    private CandidateSet published;
    private boolean stale;                      // onError was called after the last publish
    private boolean failing;                    // in an outage: log later failures at DEBUG
    private String lastError;
    private int failures;                       // since the last established watch: sets the backoff
    private final List<Client> retired = new ArrayList<>();   // replaced clients, closed after RETIRE_GRACE
    private ScheduledFuture<?> keepalive;       // asks etcd for a sign of life while the watch is established
    private boolean signOfLifePending;          // a sign-of-life read of this session is under way

    private volatile int knownCount;
    private final AtomicLong fullReads = new AtomicLong();
    private final AtomicLong fullReadPages = new AtomicLong();
    private final AtomicLong signsOfLifeAsked = new AtomicLong();
    private final AtomicLong watchesEstablished = new AtomicLong();
    private final AtomicLong responsesHandedOver = new AtomicLong();

    EtcdWorkerDiscovery(EtcdSettings settings) {
        this.settings = settings;
        this.prefix = settings.prefixBytes();
        this.prefixEnd = OptionsUtil.prefixEndOf(prefix);
        this.backoff = dev.rollcall.api.Backoff.of(settings.backoffInitial(), settings.backoffMax());
    }

    /** Starts the loop thread, which connects, reads the prefix, publishes and watches. Returns at once. */
    @Override
    public void start(CandidateListener candidateListener) {
        Objects.requireNonNull(candidateListener, "listener");
        synchronized (lock) {
            if (closed || loop != null) {
                throw new IllegalStateException(description() + " was already started or closed");
            }
            listener = candidateListener;
            loop = new DaemonLoop(THREAD_NAME);
            loop.execute(guarded(this::connect));
        }
        LOG.debug("watching {} under {}", settings.endpointList(), settings.prefix());
    }

    // ---- on the loop thread ------------------------------------------------------------------

    private void connect() {
        pending = null;
        if (closed) {
            return;
        }
        try {
            if (freshConnection) {
                retireClient();
                freshConnection = false;
            }
            if (client == null) {
                client = settings.newClient();
            }
            if (needFullRead) {
                readAll();
            }
            openWatch();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // close() is stopping the loop
        } catch (RuntimeException | ExecutionException | TimeoutException e) {
            failed(needFullRead ? "cannot read " + settings.prefix() + " from etcd " + settings.endpointList()
                    : "cannot watch " + settings.prefix() + " on etcd " + settings.endpointList(), e);
        }
    }

    /**
     * Reads the whole prefix in pages of {@code page-size} keys, every page at the revision of the
     * first, so that the set is one consistent snapshot however many keys there are; a page larger
     * than one answer may be (gRPC's inbound limit) is asked again with half as many keys.
     */
    private void readAll() throws InterruptedException, ExecutionException, TimeoutException {
        Map<String, WorkerEndpoint> read = new HashMap<>();
        ByteSequence from = prefix;
        long at = 0;
        int limit = settings.pageSize();
        int pages = 0;
        int keys = 0;
        while (true) {
            GetOption.Builder option = GetOption.builder().withRange(prefixEnd).withLimit(limit);
            if (at != 0) {
                option.withRevision(at);
            }
            GetResponse r;
            try {
                r = client.getKVClient().get(from, option.build()).get(settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (limit > 1 && EtcdFailures.isTooLarge(e)) {
                    limit = Math.max(1, limit / 2);
                    LOG.debug("a page of {} keys under {} is larger than one answer may be; asking for {} at once",
                            limit * 2, settings.prefix(), limit);
                    continue;
                }
                throw e;
            }
            if (closed) {
                return;
            }
            if (at == 0) {
                at = r.getHeader().getRevision();
            }
            pages++;
            List<KeyValue> kvs = r.getKvs();
            keys += kvs.size();
            for (KeyValue kv : kvs) {
                WorkerEndpoint endpoint = parse(kv);
                if (endpoint != null) {
                    read.put(key(kv), endpoint);
                }
            }
            if (!r.isMore() || kvs.isEmpty()) {
                break;
            }
            from = nextKey(kvs.get(kvs.size() - 1).getKey());
        }
        entries.replaceAll(read);
        revision = at;
        needFullRead = false;
        fullReads.incrementAndGet();
        fullReadPages.addAndGet(pages);
        LOG.debug("read {} keys under {} at revision {} in {} page(s)", keys, settings.prefix(), revision, pages);
        publish(true);
    }

    /** The smallest key after {@code key}: the key with a zero byte appended. */
    private static ByteSequence nextKey(ByteSequence key) {
        byte[] k = key.getBytes();
        byte[] next = java.util.Arrays.copyOf(k, k.length + 1);
        return ByteSequence.from(next);
    }

    private void openWatch() {
        long id = ++session;
        established = false;
        WatchOption option = WatchOption.builder()
                .isPrefix(true)
                .withRevision(revision + 1)
                .withCreateNotify(true)
                .build();
        watcher = client.getWatchClient().watch(prefix, option, Watch.listener(
                response -> onResponse(id, response),
                error -> onLoop(() -> onWatchError(id, error)),
                () -> onLoop(() -> onWatchCompleted(id))));
        // A watch that etcd never confirms (a hung server) must not leave us waiting forever.
        Duration confirmWithin = Duration.ofMillis(settings.callBudgetMillis());
        pending = schedule(() -> {
            if (id == session && !established) {
                failed("etcd " + settings.endpointList() + " did not confirm the watch on " + settings.prefix()
                        + " within " + confirmWithin.toMillis() + " ms", null);
            }
        }, confirmWithin);
    }

    /**
     * A watch response, on jetcd's callback thread: applied there at once when the state is free and
     * no earlier response waits on the loop thread, else handed to the loop thread behind them. jetcd
     * delivers one watch's responses one at a time, so this is never called concurrently for one
     * session, and a response never overtakes one handed over before it.
     */
    private void onResponse(long id, WatchResponse response) {
        if (closed) {
            return;
        }
        if (responsesQueued.get() == 0 && state.tryLock()) {
            try {
                if (!closed) {
                    onWatchResponse(id, response);
                }
            } catch (RuntimeException e) {
                LOG.error("unexpected failure applying an etcd watch response", e);
            } finally {
                state.unlock();
            }
            return;
        }
        responsesQueued.incrementAndGet();
        responsesHandedOver.incrementAndGet();
        onLoop(() -> {
            responsesQueued.decrementAndGet();
            onWatchResponse(id, response);
        });
    }

    private void onWatchResponse(long id, WatchResponse response) {
        if (id != session || closed) {
            return;
        }
        if (response.isCreatedNotify()) {
            established = true;
            cancelPending();
            startKeepalive(id);
            watchesEstablished.incrementAndGet();
            failures = 0;
            lastError = null;
            if (failing) {
                LOG.info("etcd {} is back; watching {} again from revision {}", settings.endpointList(),
                        settings.prefix(), revision + 1);
                failing = false;
            }
            if (stale) {
                if (response.getHeader().getRevision() <= revision) {
                    publish(true);      // nothing at all changed while we were away
                } else {
                    // Changes were made meanwhile (perhaps elsewhere in etcd): their events follow
                    // shortly; publish once they are in, or after the window if none are ours.
                    pending = schedule(() -> {
                        if (id == session && stale) {
                            publish(true);
                        }
                    }, CATCH_UP_WINDOW);
                }
            }
            return;
        }
        boolean changed = false;
        for (WatchEvent event : response.getEvents()) {
            KeyValue kv = event.getKeyValue();
            switch (event.getEventType()) {
                case PUT -> changed |= put(kv);
                case DELETE -> changed |= entries.remove(key(kv));
                default -> LOG.debug("ignoring an unrecognised watch event on {}", PeerText.escape(key(kv)));
            }
            revision = Math.max(revision, kv.getModRevision());
        }
        if (changed || stale) {
            cancelPending();
            publish(stale);
        }
    }

    private void onWatchError(long id, Throwable error) {
        if (id != session || closed) {
            return;
        }
        closeWatcher();
        if (EtcdFailures.isCompaction(error)) {
            needFullRead = true;
            LOG.info("etcd compacted revision {} away before the watch on {} resumed; reading the whole prefix"
                    + " again", revision + 1, settings.prefix());
            cancelPending();
            pending = schedule(this::connect, Duration.ZERO);
            return;
        }
        failed("the watch on " + settings.prefix() + " at etcd " + settings.endpointList() + " broke", error);
    }

    private void onWatchCompleted(long id) {
        if (id != session || closed) {
            return;
        }
        closeWatcher();
        failed("etcd " + settings.endpointList() + " ended the watch on " + settings.prefix(), null);
    }

    /**
     * While the watch is established, reads one key every {@code keepalive-time} (serializable: the
     * member answers from its own state, no consensus round), over the watch's connection. A watch
     * is silent while nothing changes, so silence alone tells nothing; a read that gets no answer
     * within {@code request-timeout} does: etcd is hung or cut off, and the watch with it.
     */
    private void startKeepalive(long id) {
        if (keepalive != null) {
            keepalive.cancel(false);
        }
        long every = settings.keepaliveTime().toNanos();
        synchronized (lock) {
            keepalive = closed ? null : loop.scheduleWithFixedDelay(guarded(() -> askForSignOfLife(id)), every, every,
                    TimeUnit.NANOSECONDS);
        }
    }

    private void askForSignOfLife(long id) {
        if (id != session || !established || closed || signOfLifePending) {
            return;     // an answer still pending fails on its own deadline
        }
        signOfLifePending = true;
        signsOfLifeAsked.incrementAndGet();
        client.getKVClient().get(prefix, GetOption.builder().withSerializable(true).withKeysOnly(true).withLimit(1)
                .build()).whenComplete((r, error) -> onLoop(() -> onSignOfLife(id, error)));
    }

    private void onSignOfLife(long id, Throwable error) {
        if (id != session || closed) {
            return;
        }
        signOfLifePending = false;
        if (error == null) {
            return;
        }
        if (!EtcdFailures.isSilence(error)) {
            // An error status is an answer all the same: etcd is there. The watch reports real trouble itself.
            LOG.debug("etcd {} answered a sign-of-life read with an error: {}", settings.endpointList(),
                    EtcdFailures.describe(error));
            return;
        }
        failed("etcd " + settings.endpointList() + " did not answer a read within " + settings.requestTimeout().toMillis()
                + " ms (request-timeout) while watching " + settings.prefix() + "; it is hung or cut off", error);
    }

    /**
     * Reports the failure (the resolver keeps the last set) and tries again after the backoff, on a
     * fresh connection: gRPC's own reconnect backoff grows to two minutes and would delay the resume
     * long after etcd is back. The old connection is closed only then, since jetcd may still be
     * scheduling work on it right after reporting the error.
     */
    private void failed(String what, Throwable cause) {
        if (closed) {
            return;
        }
        closeWatcher();
        freshConnection = true;
        cancelPending();
        Duration delay = backoff.delay(++failures);
        String message = what + (cause == null ? "" : ": " + EtcdFailures.describe(cause));
        if (!failing) {
            LOG.warn("{}; {}, retrying with backoff (next in {} ms)", message, published == null
                    ? "no set was read from etcd since start-up" : "keeping the last " + knownCount + " workers",
                    delay.toMillis());
            failing = true;
        } else {
            LOG.debug("{}; retry {} in {} ms", message, failures, delay.toMillis());
        }
        if (!message.equals(lastError)) {
            lastError = message;
            stale = true;
            try {
                listener.onError(new IOException(message, cause));
            } catch (RuntimeException e) {
                LOG.warn("candidate listener failed on an error report", e);
            }
        }
        pending = schedule(this::connect, delay);
    }

    /** Applies a PUT; {@code true} when the set of workers changed. A malformed value removes its key. */
    private boolean put(KeyValue kv) {
        WorkerEndpoint endpoint = parse(kv);
        return endpoint == null ? entries.remove(key(kv)) : entries.put(key(kv), endpoint);
    }

    /** The worker a key's value describes, or null (logged) when the value is malformed. */
    private static WorkerEndpoint parse(KeyValue kv) {
        try {
            return WorkerValue.parse(kv.getValue().getBytes());
        } catch (IllegalArgumentException e) {
            LOG.warn("etcd key {}: skipping malformed worker value (revision {}), keeping the others: {}",
                    PeerText.escape(key(kv)), kv.getModRevision(), PeerText.escape(e.getMessage()));
            return null;
        }
    }

    private void publish(boolean force) {
        // One candidate per URL (two keys naming one worker, a re-registration under a new id, count once: the
        // smallest key's labels are used), kept one event at a time: the resolver applies only what changed.
        CandidateSet set = entries.candidates();
        if (!force && set == published) {
            return;
        }
        published = set;
        knownCount = set.size();
        stale = false;
        try {
            listener.onCandidates(set);
        } catch (RuntimeException e) {
            LOG.warn("candidate listener failed", e);
        }
    }

    private void closeWatcher() {
        session++;                       // late callbacks of the old watch are ignored from now on
        established = false;
        signOfLifePending = false;
        if (keepalive != null) {
            keepalive.cancel(false);
            keepalive = null;
        }
        if (watcher != null) {
            Watch.Watcher w = watcher;
            watcher = null;
            try {
                w.close();
            } catch (RuntimeException e) {
                LOG.debug("closing the watch failed", e);
            }
        }
    }

    private void closeClient() {
        if (client != null) {
            Client c = client;
            client = null;
            closeQuietly(c);
        }
    }

    /** Replaces the client: the old one is closed once jetcd's own watch retry on it is over. */
    private void retireClient() {
        if (client == null) {
            return;
        }
        Client old = client;
        client = null;
        retired.add(old);
        schedule(() -> {
            if (retired.remove(old)) {
                closeQuietly(old);
            }
        }, RETIRE_GRACE);
    }

    private static void closeQuietly(Client c) {
        try {
            c.close();
        } catch (RuntimeException e) {
            LOG.debug("closing the etcd client failed", e);
        }
    }

    private void cancelPending() {
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    private ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        synchronized (lock) {
            if (closed) {
                return null;
            }
            return loop.schedule(guarded(task), delay.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Hands jetcd's news to the loop thread; dropped once closed. */
    void onLoop(Runnable task) {
        ScheduledExecutorService l;
        synchronized (lock) {
            l = closed ? null : loop;
        }
        if (l == null) {
            return;
        }
        try {
            l.execute(guarded(task));
        } catch (RejectedExecutionException e) {
            // Closed meanwhile.
        }
    }

    /**
     * A step of the loop: runs under the state lock. A bug in one step must not end the loop
     * silently: log it and carry on with the next news.
     */
    private Runnable guarded(Runnable task) {
        return () -> {
            state.lock();
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("unexpected failure in the etcd watch loop", e);
            } finally {
                state.unlock();
            }
        };
    }

    private static String key(KeyValue kv) {
        return kv.getKey().toString(StandardCharsets.UTF_8);
    }

    // ---- any thread -------------------------------------------------------------------------

    /**
     * Stops the watch and the loop thread and closes the connection; no listener call happens after
     * it returns (unless it is called from the listener itself). Idempotent; never throws.
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
        // Interrupts a read in progress and drops scheduled retries; jetcd's callbacks see closed.
        l.shutdownNow();
        try {
            if (!l.awaitEnded(settings.callBudgetMillis())) {
                LOG.warn("thread {} did not stop; it is a daemon and will not keep the JVM alive", THREAD_NAME);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // The loop has ended; a watch response being applied on jetcd's thread is waited for (it sees closed next).
        boolean locked = lockState(settings.callBudgetMillis());
        try {
            closeWatcher();
            closeClient();
            retired.forEach(EtcdWorkerDiscovery::closeQuietly);
            retired.clear();
        } finally {
            if (locked) {
                state.unlock();
            }
        }
        LOG.debug("stopped watching {} under {}", settings.endpointList(), settings.prefix());
    }

    /** Takes the state lock within {@code millis}; false (logged) if a step of the loop that did not stop holds it. */
    private boolean lockState(long millis) {
        try {
            if (state.tryLock(millis, TimeUnit.MILLISECONDS)) {
                return true;
            }
            LOG.warn("a step of the etcd watch loop still runs after {} ms; closing its connection anyway", millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** E.g. {@code etcd[http://127.0.0.1:2379, prefix=/rollcall/workers/, 3 workers]}; never the password. */
    @Override
    public String description() {
        int n = knownCount;
        return "etcd[" + settings.endpointList() + ", prefix=" + settings.prefix() + ", " + n
                + (n == 1 ? " worker]" : " workers]");
    }

    @Override
    public String toString() {
        return description();
    }

    /** How many times the whole prefix was read (1 at start, +1 per compaction recovery). */
    long fullReads() {
        return fullReads.get();
    }

    /** How many range requests the full reads took, over all of them. */
    long fullReadPages() {
        return fullReadPages.get();
    }

    /** How many sign-of-life reads were sent. */
    long signsOfLifeAsked() {
        return signsOfLifeAsked.get();
    }

    /** How many watch responses were handed to the loop thread rather than applied on jetcd's. */
    long responsesHandedOver() {
        return responsesHandedOver.get();
    }

    /** How many watches etcd has confirmed (1 at start, +1 per resume). */
    long watchesEstablished() {
        return watchesEstablished.get();
    }
}
