package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.Backoff;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.CandidateSet;
import dev.rollcall.api.discovery.KeyedCandidates;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.internal.DaemonLoop;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.HashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code zookeeper} discovery backend: the workers are the children of one path. Created by
 * {@link ZooKeeperWorkerDiscoveryProvider}.
 *
 * <p><b>How it follows ZooKeeper.</b> It puts a persistent recursive watch on the path, then reads
 * every child and publishes the set; after that, each event on a child re-reads that child (or
 * drops it) and publishes the full set again when it changed. Events below the children are
 * ignored. When the connection is lost (Curator's {@code SUSPENDED}, or {@code LOST} when the
 * session expired) it tells the listener ({@code onError}: the resolver keeps the last set, marked
 * stale). When the connection is back it reads every child again, so that changes made while it
 * was away are all applied, and publishes (clearing the stale mark); after a session expiry the
 * watch belonged to the old session, so a new one is added first and events of the old one are
 * ignored. A read that fails is retried with exponential backoff; until a full read succeeds,
 * events are left to it, so that no partial set is ever published. A child whose data is not a
 * worker description is skipped with a WARN naming its path; the others are published. A path that
 * does not exist yet is an empty set; the watch sees it created.
 *
 * <p><b>Threads.</b> Everything happens on one daemon thread, {@code rollcall-zookeeper-watch};
 * ZooKeeper's and Curator's callbacks only hand their news to it, so the state needs no locks and
 * the listener is called from that thread alone. {@link #start} returns at once. Every blocking
 * call waits at most about one {@code connection-timeout}: a ZooKeeper that cannot be reached at
 * start is reported within it.
 */
final class ZooKeeperWorkerDiscovery implements WorkerDiscovery {

    static final String THREAD_NAME = "rollcall-zookeeper-watch";

    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperWorkerDiscovery.class);

    private final ZooKeeperSettings settings;
    private final Backoff backoff;

    // Lifecycle: written under lock by start() and close(); read by any thread.
    private final Object lock = new Object();
    private DaemonLoop loop;                    // guarded by lock
    private CandidateListener listener;         // written once under lock, before the loop starts
    private volatile boolean closed;

    // Loop state: touched only on the loop thread.
    private CuratorFramework client;
    private long session;                       // bumped per watch; events of older watches are ignored
    private long watchedZooKeeperSession;       // the ZooKeeper session the current watch belongs to
    private ScheduledFuture<?> retry;           // the next full read after a failure
    private int failures;
    /** The workers by child name, and the candidate set they make (kept up to date one event at a time). */
    private final KeyedCandidates entries = new KeyedCandidates();
    private boolean complete;                   // entries hold a whole read; false from a failure to the next one
    private CandidateSet published;             // null until the first read
    private boolean stale;                      // onError was called after the last publish

    // Counters for status output and tests: written on the loop thread, read anywhere.
    private volatile int knownCount;
    private volatile long currentZooKeeperSession;
    private final AtomicLong fullReads = new AtomicLong();
    private final AtomicLong watchesAdded = new AtomicLong();

    ZooKeeperWorkerDiscovery(ZooKeeperSettings settings) {
        this.settings = settings;
        this.backoff = Backoff.of(settings.backoffInitial(), settings.backoffMax());
    }

    /** Starts the loop thread, which connects, watches the path and reads its children. Returns at once. */
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
        LOG.debug("watching {} on ZooKeeper {}", settings.path(), settings.connect());
    }

    // ---- on the loop thread ------------------------------------------------------------------

    private void connect() {
        if (closed) {
            return;
        }
        client = settings.newClient(0);
        client.getConnectionStateListenable().addListener((c, state) -> onLoop(() -> onState(state)));
        client.start();
        readAll();
    }

    private void onState(ConnectionState state) {
        if (closed) {
            return;
        }
        switch (state) {
            case SUSPENDED -> failed("lost the connection to ZooKeeper " + settings.connect(), null);
            case LOST -> failed("the ZooKeeper session with " + settings.connect() + " expired", null);
            case RECONNECTED -> {
                LOG.info("ZooKeeper {} is back; reading {} again", settings.connect(), settings.path());
                readAll();
            }
            default -> LOG.debug("ZooKeeper connection {}", state);
        }
    }

    /** Watches the path (again, if the session is new) and reads every child; publishes the result. */
    private void readAll() {
        cancelRetry();
        try {
            long zkSession = client.getZookeeperClient().getZooKeeper().getSessionId();
            if (zkSession == 0 || zkSession != watchedZooKeeperSession) {
                addWatch();
            }
            List<String> children;
            try {
                children = client.getChildren().forPath(settings.path());
            } catch (KeeperException.NoNodeException e) {
                children = List.of();
                LOG.debug("{} does not exist (yet): no workers", settings.path());
            }
            // Into a new map: a read that fails halfway must not leave a partial set to publish.
            Map<String, WorkerEndpoint> read = new HashMap<>();
            for (String child : children) {
                WorkerEndpoint endpoint = readChild(child);
                if (endpoint != null) {
                    read.put(child, endpoint);
                }
            }
            entries.replaceAll(read);
            complete = true;
            currentZooKeeperSession = client.getZookeeperClient().getZooKeeper().getSessionId();
            fullReads.incrementAndGet();
            failures = 0;
            publish(true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // close() is stopping the loop
        } catch (Exception e) {
            if (!closed) {
                failed("cannot read " + settings.path() + " from ZooKeeper " + settings.connect(), e);
            }
        }
    }

    private void addWatch() throws Exception {
        long id = ++session;
        Watcher watcher = event -> onLoop(() -> onEvent(id, event));
        client.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher(watcher)
                .forPath(settings.path());
        watchedZooKeeperSession = client.getZookeeperClient().getZooKeeper().getSessionId();
        watchesAdded.incrementAndGet();
    }

    /** Reads one child: the worker it describes, or null when it is gone, malformed (logged) or disabled. */
    private WorkerEndpoint readChild(String child) throws Exception {
        String path = settings.childPath(child);
        String shown = PeerText.escape(path);   // ZooKeeper allows bidi controls in names
        byte[] data;
        try {
            data = client.getData().forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            return null;
        }
        Optional<WorkerEndpoint> endpoint;
        try {
            endpoint = WorkerNode.parse(data);
        } catch (IllegalArgumentException e) {
            LOG.warn("skipping ZooKeeper node {} on {}: {}", shown, settings.connect(), PeerText.escape(e.getMessage()));
            return null;
        }
        if (endpoint.isEmpty()) {
            LOG.debug("{} is an x-discovery instance marked disabled: not a candidate", shown);
            return null;
        }
        return endpoint.get();
    }

    private void onEvent(long id, WatchedEvent event) {
        if (id != session || closed || event.getType() == Watcher.Event.EventType.None) {
            return; // an old session's watch, or a connection event (Curator's states report those)
        }
        if (!complete) {
            return; // a full read is due after a failure; it will see this change too
        }
        String path = event.getPath();
        if (path == null) {
            return;
        }
        boolean changed;
        if (path.equals(settings.path())) {
            if (event.getType() != Watcher.Event.EventType.NodeDeleted) {
                return;
            }
            changed = entries.clear();
        } else {
            String rest = path.startsWith(settings.path() + "/") ? path.substring(settings.path().length() + 1) : "";
            if (rest.isEmpty() || rest.indexOf('/') >= 0) {
                return; // deeper than a worker's node
            }
            try {
                changed = switch (event.getType()) {
                    case NodeDeleted -> entries.remove(rest);
                    case NodeCreated, NodeDataChanged -> {
                        WorkerEndpoint endpoint = readChild(rest);
                        yield endpoint == null ? entries.remove(rest) : entries.put(rest, endpoint);
                    }
                    default -> false;
                };
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                failed("cannot read " + PeerText.escape(path) + " from ZooKeeper " + settings.connect(), e);
                return;
            }
        }
        if (changed || stale) {
            publish(false);
        }
    }

    private void publish(boolean fullRead) {
        // Kept one event at a time: the resolver applies only what changed. One endpoint per URL: of two nodes
        // naming one URL, the smaller name's.
        CandidateSet set = entries.candidates();
        if (!stale && set == published) { // KeyedCandidates hands the same set while nothing changed
            return;
        }
        if (stale) {
            LOG.info("ZooKeeper {}: {} workers under {} after recovery", settings.connect(), set.size(),
                    settings.path());
        }
        published = set;
        stale = false;
        knownCount = set.size();
        LOG.debug("{} workers under {}{}", set.size(), settings.path(), fullRead ? " (full read)" : "");
        listener.onCandidates(set);
    }

    /**
     * Reports the failure (the resolver keeps the last set) and reads everything again after the
     * backoff, or as soon as Curator reports the connection back, whichever comes first.
     */
    private void failed(String what, Exception e) {
        failures++;
        Duration delay = backoff.delay(failures);
        String message = what + (e == null ? "" : ": " + describe(e));
        if (!stale) {
            LOG.warn("{}; keeping the last set, reading again when it is back", message);
        } else {
            LOG.debug("{} (failure {}); retrying in {} ms", message, failures, delay.toMillis());
        }
        stale = true;
        complete = false;
        listener.onError(new IllegalStateException(message, e));
        cancelRetry();
        retry = schedule(this::readAll, delay);
    }

    private void cancelRetry() {
        if (retry != null) {
            retry.cancel(false);
            retry = null;
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

    /** Hands ZooKeeper's and Curator's news to the loop thread; dropped once closed. */
    private void onLoop(Runnable task) {
        DaemonLoop l;
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

    /** A bug in one step must not end the loop silently: log it and carry on with the next news. */
    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("unexpected failure in the ZooKeeper watch loop", e);
            }
        };
    }

    /** A short reason, e.g. {@code ConnectionLoss for /rollcall/workers}; ZooKeeper's messages carry no secrets. */
    static String describe(Throwable t) {
        if (t instanceof KeeperException k) {
            return k.code() + (k.getPath() == null ? "" : " for " + PeerText.escape(k.getPath()));
        }
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : PeerText.escape(m);
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
        l.shutdownNow(); // interrupts a read in progress and drops scheduled retries
        try {
            if (!l.awaitEnded(settings.callBudgetMillis())) {
                LOG.warn("thread {} did not stop; it is a daemon and will not keep the JVM alive", THREAD_NAME);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // The loop has ended, so its state is ours now.
        if (client != null) {
            try {
                client.close();
            } catch (RuntimeException e) {
                LOG.debug("closing the ZooKeeper client failed", e);
            }
        }
        LOG.debug("stopped watching {} on ZooKeeper {}", settings.path(), settings.connect());
    }

    /** E.g. {@code zookeeper[10.0.0.1:2181, path=/rollcall/workers, 3 workers]}; never the password. */
    @Override
    public String description() {
        int n = knownCount;
        return "zookeeper[" + settings.connect() + ", path=" + settings.path() + ", " + n
                + (n == 1 ? " worker]" : " workers]");
    }

    @Override
    public String toString() {
        return description();
    }

    /** How many times every child was read (1 at start, +1 per reconnection or retry). */
    long fullReads() {
        return fullReads.get();
    }

    /** How many watches were added (1 at start, +1 per new session). */
    long watchesAdded() {
        return watchesAdded.get();
    }

    /** The ZooKeeper session of the last full read; 0 before it. */
    long zooKeeperSession() {
        return currentZooKeeperSession;
    }
}
