package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's entry in ZooKeeper: the ephemeral node {@code <path>/<id>} holding a Curator
 * x-discovery {@code ServiceInstance} (name = the path's last segment, id, address, port or sslPort,
 * a payload with the worker's labels, version and instance id), so that Curator's own
 * {@code ServiceDiscovery} readers find Rollcall's workers as they find their own. Created by
 * {@link ZooKeeperRegistrationProvider} (and so by {@code RollcallWorker} when
 * {@code rollcall.worker.register=true} and {@code rollcall.discovery.type=zookeeper}).
 *
 * <p><b>What it promises.</b> {@link #start()} creates the node (and its parents, as containers);
 * from then on, while this object is open and ZooKeeper is reachable, the node exists. If the
 * process dies, its session ends and ZooKeeper deletes the node when the session times out
 * ({@code session-timeout}, default 15 s). {@link #close()} deletes the node at once. If the
 * session expires while the worker lives (ZooKeeper was unreachable for longer than the session
 * timeout), or someone deletes the node, Curator's {@code PersistentNode} creates it again on the
 * new session, in the background, at once: this registration watches its node, logs a WARN naming
 * the node and the worker when someone else deletes it, and an INFO when it is back.
 *
 * <p><b>Threads.</b> Curator's own threads (its event thread and ZooKeeper's I/O threads) keep the
 * node; this class starts none of its own. Thread-safe.
 */
final class ZooKeeperRegistration implements WorkerRegistration {

    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperRegistration.class);

    private final ZooKeeperSettings settings;
    private final String worker;
    private final String nodePath;
    private final byte[] data;
    private final Object lock = new Object();
    private CuratorFramework client;      // guarded by lock
    private PersistentNode node;          // guarded by lock
    private boolean started;              // guarded by lock
    private boolean closed;               // guarded by lock
    private final AtomicLong creations = new AtomicLong();

    ZooKeeperRegistration(ZooKeeperSettings settings, WorkerInfo self, String id) {
        this.settings = settings;
        this.worker = self.endpoint().url();
        this.nodePath = settings.childPath(id);
        String name = settings.path().substring(settings.path().lastIndexOf('/') + 1);
        this.data = WorkerNode.encode(self, name, id);
    }

    /**
     * Connects and creates the node; returns once ZooKeeper has acknowledged it, within about two
     * {@code connection-timeout}s.
     *
     * @throws RegistrationException when ZooKeeper did not acknowledge in time or refused; nothing
     *                               is left running. The message names the worker, the node and the
     *                               connection string, never the password.
     * @throws IllegalStateException when already started or closed
     */
    @Override
    public void start() {
        CuratorFramework c;
        PersistentNode n;
        synchronized (lock) {
            if (closed || started) {
                throw new IllegalStateException(description() + " was already started or closed");
            }
            started = true;
            c = settings.newClient(1);
            n = new PersistentNode(c, CreateMode.EPHEMERAL, false, nodePath, data);
            n.getListenable().addListener(path -> {
                long count = creations.incrementAndGet();
                if (count == 1) {
                    LOG.debug("worker {}: ZooKeeper node {} created", worker, path);
                } else {
                    LOG.info("worker {}: ZooKeeper node {} written again", worker, path);
                }
                watchForDeletion(c);
            });
            client = c;
            node = n;
        }
        boolean created;
        try {
            c.start();
            n.start();
            created = n.waitForInitialCreate(settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            abandon();
            Thread.currentThread().interrupt();
            throw new RegistrationException("interrupted while registering worker " + worker + " at ZooKeeper node "
                    + nodePath, e);
        } catch (RuntimeException e) {
            abandon();
            throw new RegistrationException("cannot register worker " + worker + " at ZooKeeper node " + nodePath
                    + " on " + settings.connect() + ": " + ZooKeeperWorkerDiscovery.describe(e), e);
        }
        if (!created) {
            abandon();
            throw new RegistrationException("cannot register worker " + worker + " at ZooKeeper node " + nodePath
                    + " on " + settings.connect() + ": not acknowledged within " + settings.callBudgetMillis() + " ms");
        }
        LOG.debug("worker {} registered at ZooKeeper node {}", worker, nodePath);
    }

    /**
     * Arms a one-shot watch on the node, so that a deletion by someone else is logged; Curator's
     * {@code PersistentNode} writes the node again by itself (and calls back here, which arms the
     * next watch). A session expiry is no deletion by someone else: it is logged by the re-creation.
     */
    private void watchForDeletion(CuratorFramework c) {
        Watcher watcher = event -> {
            if (event.getType() == Watcher.Event.EventType.NodeDeleted && !isClosed()) {
                LOG.warn("worker {}: its ZooKeeper node {} on {} was deleted while the worker lives (by an operator or"
                        + " another client); writing it again", worker, nodePath, settings.connect());
            } else if (event.getType() != Watcher.Event.EventType.None && !isClosed()) {
                watchForDeletion(c);    // its data changed: keep watching
            }
        };
        try {
            c.checkExists().usingWatcher(watcher).inBackground().forPath(nodePath);
        } catch (Exception e) {
            LOG.debug("worker {}: cannot watch ZooKeeper node {}: {}", worker, nodePath,
                    ZooKeeperWorkerDiscovery.describe(e));
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /** Undoes a failed start: nothing may stay running. */
    private void abandon() {
        synchronized (lock) {
            closed = true;
        }
        closeQuietly();
    }

    /** The node this worker is registered at, e.g. {@code /rollcall/workers/10.0.0.5_7001}. */
    String path() {
        return nodePath;
    }

    /** How many times the node was created: 1, plus one per re-creation after a session expiry. */
    long creations() {
        return creations.get();
    }

    /** The ZooKeeper session that holds the node now; 0 when not connected. */
    long sessionId() {
        synchronized (lock) {
            try {
                return client == null ? 0 : client.getZookeeperClient().getZooKeeper().getSessionId();
            } catch (Exception e) {
                return 0;
            }
        }
    }

    /**
     * Deletes the node (a clean shutdown: coordinators see the worker leave at once) and closes the
     * connection. If ZooKeeper cannot be reached the failure is logged and the node vanishes when the
     * session times out. Idempotent; never throws.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closeQuietly();
    }

    private void closeQuietly() {
        PersistentNode n;
        CuratorFramework c;
        synchronized (lock) {
            n = node;
            c = client;
            node = null;
            client = null;
        }
        if (n != null) {
            try {
                n.close(); // deletes the node
            } catch (IOException | RuntimeException e) {
                LOG.warn("worker {}: cannot delete ZooKeeper node {} on {} ({}); it vanishes when the session times"
                        + " out", worker, nodePath, settings.connect(), ZooKeeperWorkerDiscovery.describe(e));
            }
        }
        if (c != null) {
            c.close();
        }
    }

    /** E.g. {@code ZooKeeper node /rollcall/workers/10.0.0.5_7001 at 10.0.0.1:2181}; no secrets. */
    @Override
    public String description() {
        return "ZooKeeper node " + nodePath + " at " + settings.connect();
    }

    @Override
    public String toString() {
        return description();
    }
}
