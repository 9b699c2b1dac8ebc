package dev.rollcall.discovery.etcd;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.internal.DaemonLoop;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's entry in etcd: the key {@code <prefix><id>} holding the worker's endpoint and labels as
 * JSON, attached to a lease that is kept alive. Created by {@link EtcdRegistrationProvider} (and so
 * by {@code RollcallWorker} when {@code rollcall.worker.register=true} and
 * {@code rollcall.discovery.type=etcd}).
 *
 * <p><b>What it promises.</b> {@link #start()} writes the entry; from then on, while this object is open and etcd is reachable, the key exists. If the
 * process dies, nothing keeps the lease alive and etcd deletes the key when the lease's TTL runs out
 * (default 10 s): coordinators see the worker leave within the TTL. {@link #close()} revokes the
 * lease, which deletes the key at once: a clean shutdown is seen immediately. If the lease is lost
 * while the worker lives (etcd was unreachable for longer than the TTL, or someone revoked it), a
 * new lease is granted and the key written again in the background, with backoff, until it
 * succeeds; this is logged. The registration also watches its own key: if someone deletes it while
 * the lease lives ({@code etcdctl del}, a script cleaning up), it is written again under the same
 * lease at once, logged at WARN and INFO with the key and the worker.
 *
 * <p><b>Threads.</b> Keep-alive answers and repairs are handled on one daemon thread,
 * {@code rollcall-etcd-registration}; jetcd sends the keep-alives themselves every third of the TTL.
 * Thread-safe. Every call to etcd has a deadline ({@code request-timeout}).
 */
final class EtcdRegistration implements WorkerRegistration {

    static final String THREAD_NAME = "rollcall-etcd-registration";

    private static final Logger LOG = LoggerFactory.getLogger(EtcdRegistration.class);

    private final EtcdSettings settings;
    private final String worker;
    private final String keyText;
    private final ByteSequence key;
    private final ByteSequence value;
    private final Duration ttl;
    private final long ttlSeconds;                // etcd counts leases in whole seconds
    private final dev.rollcall.api.Backoff backoff;
    private int failures; // since the last success; on the loop's thread, like the loop's other state
    private final Object lock = new Object();
    private DaemonLoop loop;                      // guarded by lock; set by start()
    private boolean closed;                       // guarded by lock
    private volatile boolean closing;
    private final AtomicLong leasesGranted = new AtomicLong();
    private final AtomicLong keepAlivesAcknowledged = new AtomicLong();
    private final AtomicLong rewrites = new AtomicLong();
    private volatile long currentLease;

    // Loop state: touched only on the loop thread.
    private Client client;
    private long leaseId;
    private long grantedTtlSeconds;
    private CloseableClient keepAlive;
    private long lastAckNanos;
    private boolean repairing;
    private ScheduledFuture<?> supervisor;
    private Watch.Watcher keyWatch;
    private long keyWatchId;                      // bumped per watch of the key; older watches' news is ignored
    private int rewriteFailures;

    EtcdRegistration(EtcdSettings settings, WorkerInfo self, String keyText, Duration ttl) {
        this.settings = settings;
        this.worker = self.endpoint().url();
        this.keyText = keyText;
        this.key = ByteSequence.from(keyText, StandardCharsets.UTF_8);
        this.value = ByteSequence.from(WorkerValue.encode(self));
        this.ttl = ttl;
        this.ttlSeconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        this.backoff = dev.rollcall.api.Backoff.of(settings.backoffInitial(), settings.backoffMax());
    }

    /**
     * Grants a lease, writes the key under it and starts keeping it alive; returns once etcd has
     * acknowledged the write, within about {@code connect-timeout} plus two {@code request-timeout}s.
     *
     * @throws RegistrationException when etcd did not acknowledge in time or refused; nothing is
     *                               left running. The message names the worker, the key and the
     *                               endpoints, never the password.
     * @throws IllegalStateException when already started or closed
     */
    @Override
    public void start() {
        DaemonLoop l;
        synchronized (lock) {
            if (closed || loop != null) {
                throw new IllegalStateException(description() + " was already started or closed");
            }
            l = new DaemonLoop(THREAD_NAME);
            loop = l;
        }
        Future<?> first = l.submit(() -> {
            establish();
            return null;
        });
        try {
            // Three steps at most (connect, grant, put), each with its own deadline.
            first.get(2 * settings.callBudgetMillis() + settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            abandon();
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new RegistrationException("cannot register worker " + worker + " at etcd key " + keyText
                    + " on " + settings.endpointList() + ": " + EtcdFailures.describe(cause), cause);
        } catch (InterruptedException e) {
            abandon();
            Thread.currentThread().interrupt();
            throw new RegistrationException("interrupted while registering worker " + worker + " at etcd key "
                    + keyText, e);
        }
        LOG.debug("worker {} registered at etcd key {} under lease {} (TTL {} s)", worker, keyText, currentLease,
                grantedTtlSeconds);
    }

    // ---- on the loop thread ------------------------------------------------------------------

    /** Grant, put, keep alive; throws on any failure, leaving no lease behind that it knows of. */
    private void establish() throws InterruptedException, ExecutionException, TimeoutException {
        if (client == null) {
            client = settings.newClient();
        }
        long budget = settings.callBudgetMillis();
        LeaseGrantResponse grant = client.getLeaseClient().grant(ttlSeconds).get(budget, TimeUnit.MILLISECONDS);
        long lease = grant.getID();
        long written;
        try {
            written = client.getKVClient().put(key, value, PutOption.builder().withLeaseId(lease).build())
                    .get(budget, TimeUnit.MILLISECONDS).getHeader().getRevision();
        } catch (ExecutionException | TimeoutException | InterruptedException e) {
            // The lease would expire on its own; revoking it is only tidiness.
            client.getLeaseClient().revoke(lease);
            throw e;
        }
        leaseId = lease;
        currentLease = lease;
        grantedTtlSeconds = grant.getTTL() > 0 ? grant.getTTL() : ttlSeconds;
        lastAckNanos = System.nanoTime();
        leasesGranted.incrementAndGet();
        keepAlive = client.getLeaseClient().keepAlive(lease, new KeepAliveObserver(lease));
        watchKey(written + 1);
        if (supervisor == null) {
            long every = Math.max(200, Math.min(1000, ttl.toMillis() / 4));
            supervisor = loopExecutor().scheduleWithFixedDelay(guarded(this::checkLease), every, every, TimeUnit.MILLISECONDS);
        }
    }

    /** Watches the key from {@code fromRevision}, so that a deletion by someone else is repaired at once. */
    private void watchKey(long fromRevision) {
        closeKeyWatch();
        long id = ++keyWatchId;
        keyWatch = client.getWatchClient().watch(key, WatchOption.builder().withRevision(fromRevision).build(),
                Watch.listener(response -> onLoop(() -> onKeyEvents(id, response)),
                        error -> onLoop(() -> onKeyWatchError(id, error))));
    }

    private void onKeyEvents(long id, WatchResponse response) {
        if (id != keyWatchId || closing || repairing || leaseId == 0) {
            return;
        }
        for (WatchEvent event : response.getEvents()) {
            if (event.getEventType() == WatchEvent.EventType.DELETE) {
                LOG.warn("worker {}: its etcd key {} was deleted (revision {}) while the worker lives (etcdctl del,"
                        + " another client, or its lease ended); writing it again under lease {}", worker, keyText,
                        event.getKeyValue().getModRevision(), leaseId);
                rewrite(leaseId);
                return;
            }
        }
    }

    /** Puts the key again under {@code lease}; a lease etcd no longer knows is a lost lease. */
    private void rewrite(long lease) {
        if (closing || repairing || lease != leaseId) {
            return;
        }
        try {
            client.getKVClient().put(key, value, PutOption.builder().withLeaseId(lease).build())
                    .get(settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
            rewrites.incrementAndGet();
            rewriteFailures = 0;
            LOG.info("worker {}: etcd key {} written again under lease {}", worker, keyText, lease);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.NOT_FOUND) {
                lost(lease, "etcd no longer knows it");
                return;
            }
            Duration delay = backoff.delay(++rewriteFailures);
            LOG.warn("worker {}: cannot write etcd key {} again on {} ({}); retrying in {} ms", worker, keyText,
                    settings.endpointList(), EtcdFailures.describe(e), delay.toMillis());
            try {
                loopExecutor().schedule(guarded(() -> rewrite(lease)), delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                // close() is under way.
            }
        }
    }

    /**
     * jetcd retries a broken watch by itself; an error here ended it for good. Look at the key
     * (writing it again if it is gone) and watch it anew after the backoff.
     */
    private void onKeyWatchError(long id, Throwable error) {
        if (id != keyWatchId || closing) {
            return;
        }
        LOG.debug("worker {}: the watch on etcd key {} ended ({}); watching it again", worker, keyText,
                EtcdFailures.describe(error));
        closeKeyWatch();
        Duration delay = backoff.delay(1);
        try {
            loopExecutor().schedule(guarded(this::resumeKeyWatch), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // close() is under way.
        }
    }

    private void resumeKeyWatch() {
        if (closing || repairing || leaseId == 0 || keyWatch != null) {
            return;     // a repair watches the key it writes
        }
        try {
            GetResponse now = client.getKVClient().get(key).get(settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
            if (now.getKvs().isEmpty()) {
                LOG.warn("worker {}: its etcd key {} is gone while it lives; writing it again under lease {}", worker,
                        keyText, leaseId);
                rewrite(leaseId);
            }
            watchKey(now.getHeader().getRevision() + 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            onKeyWatchError(keyWatchId, e);
        }
    }

    private void closeKeyWatch() {
        keyWatchId++;
        if (keyWatch != null) {
            try {
                keyWatch.close();
            } catch (RuntimeException e) {
                LOG.debug("closing the watch on the key failed", e);
            }
            keyWatch = null;
        }
    }

    /** A backstop for jetcd's keep-alive: no acknowledgement for a whole TTL means the lease is gone. */
    private void checkLease() {
        if (closing || repairing || leaseId == 0) {
            return;
        }
        long silentMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastAckNanos);
        if (silentMillis > grantedTtlSeconds * 1000) {
            lost(leaseId, "no keep-alive was acknowledged for " + silentMillis + " ms, longer than its TTL");
        }
    }

    private void lost(long lease, String reason) {
        if (closing || repairing || lease != leaseId) {
            return;
        }
        repairing = true;
        LOG.warn("worker {}: etcd lease {} of key {} was lost ({}); registering it again", worker, lease, keyText,
                reason);
        closeKeepAlive();
        leaseId = 0;
        currentLease = 0;
        repair(lease);
    }

    private void repair(long oldLease) {
        if (closing) {
            return;
        }
        try {
            closeClient(); // a fresh connection: gRPC's own reconnect backoff can lag far behind etcd
            establish();
            repairing = false;
            failures = 0;
            LOG.info("worker {} registered again at etcd key {} under lease {}", worker, keyText, leaseId);
            if (oldLease != 0) {
                // If the old lease still lives, it no longer holds the key; let it go.
                client.getLeaseClient().revoke(oldLease);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            closeClient();
            Duration delay = backoff.delay(++failures);
            String message = "worker " + worker + ": cannot register etcd key " + keyText + " again on "
                    + settings.endpointList() + " (" + EtcdFailures.describe(e) + "); retrying in "
                    + delay.toMillis() + " ms";
            if (failures == 1) {
                LOG.warn(message);
            } else {
                LOG.debug(message);
            }
            try {
                loopExecutor().schedule(guarded(() -> repair(oldLease)), delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                // close() is under way.
            }
        }
    }

    private void closeKeepAlive() {
        if (keepAlive != null) {
            try {
                keepAlive.close();
            } catch (RuntimeException e) {
                LOG.debug("stopping the keep-alive failed", e);
            }
            keepAlive = null;
        }
    }

    private void closeClient() {
        closeKeyWatch();
        closeKeepAlive();
        if (client != null) {
            try {
                client.close();
            } catch (RuntimeException e) {
                LOG.debug("closing the etcd client failed", e);
            }
            client = null;
        }
    }

    /** Undoes a failed first registration: nothing may stay running. */
    private void abandon() {
        DaemonLoop l;
        synchronized (lock) {
            closed = true;
            l = loop;
        }
        closing = true;
        l.shutdownNow();
        awaitThreadEnded(l);
        if (client != null && leaseId != 0) {
            client.getLeaseClient().revoke(leaseId);
        }
        closeClient();
    }

    private void onLoop(Runnable task) {
        DaemonLoop l;
        synchronized (lock) {
            l = loop;
        }
        try {
            l.execute(guarded(task));
        } catch (RejectedExecutionException e) {
            // Closed.
        }
    }

    private DaemonLoop loopExecutor() {
        synchronized (lock) {
            return loop;
        }
    }

    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("unexpected failure in the etcd registration loop", e);
            }
        };
    }

    /** jetcd's keep-alive news, handed to the loop thread. */
    private final class KeepAliveObserver implements StreamObserver<LeaseKeepAliveResponse> {
        private final long lease;

        KeepAliveObserver(long lease) {
            this.lease = lease;
        }

        @Override
        public void onNext(LeaseKeepAliveResponse response) {
            onLoop(() -> {
                if (lease != leaseId) {
                    return;
                }
                if (response.getTTL() > 0) {
                    lastAckNanos = System.nanoTime();
                    keepAlivesAcknowledged.incrementAndGet();
                } else {
                    lost(lease, "etcd no longer knows it");
                }
            });
        }

        @Override
        public void onError(Throwable t) {
            onLoop(() -> {
                if (lease != leaseId) {
                    return;
                }
                Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                if (c instanceof EtcdException e && e.getErrorCode() == ErrorCode.NOT_FOUND) {
                    lost(lease, "etcd no longer knows it");
                } else {
                    // jetcd re-opens the keep-alive stream by itself; checkLease notices if that fails for a TTL.
                    LOG.debug("worker {}: keep-alive of lease {} interrupted: {}", worker, lease,
                            EtcdFailures.describe(t));
                }
            });
        }

        @Override
        public void onCompleted() {
            onLoop(() -> lost(lease, "its keep-alive ended without an acknowledgement within its TTL"));
        }
    }

    // ---- any thread -------------------------------------------------------------------------

    /** The key this worker is registered under, e.g. {@code /rollcall/workers/10.0.0.5_7001}. */
    public String key() {
        return keyText;
    }

    /** The lease's time to live as configured ({@code registration.ttl}). */
    public Duration ttl() {
        return ttl;
    }

    /** The lease the key is attached to now; 0 while it is being registered again. */
    long leaseId() {
        return currentLease;
    }

    /** How many leases were granted: 1, plus one per repair. */
    long leasesGranted() {
        return leasesGranted.get();
    }

    /** How many times the key was written again after someone deleted it. */
    long rewrites() {
        return rewrites.get();
    }

    /** How many keep-alives etcd has acknowledged, over every lease. */
    long keepAlivesAcknowledged() {
        return keepAlivesAcknowledged.get();
    }

    /**
     * Revokes the lease, which deletes the key at once, stops the keep-alive and closes the
     * connection. Waits at most about one request timeout for etcd (longer only if a repair is under
     * way); if etcd cannot be reached the failure is logged and the key vanishes when its lease
     * expires. Idempotent; never throws.
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
        closing = true;
        if (l == null) {
            return; // never started: nothing to undo
        }
        Future<?> deregistered;
        try {
            deregistered = l.submit(this::deregister);
        } catch (RejectedExecutionException e) {
            return;
        }
        l.shutdown();
        try {
            deregistered.get(3 * settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("worker {}: leaving etcd did not finish ({}); key {} vanishes when its lease expires", worker,
                    EtcdFailures.describe(e), keyText);
            l.shutdownNow();
        } catch (InterruptedException e) {
            l.shutdownNow();
            Thread.currentThread().interrupt();
            return;
        }
        awaitThreadEnded(l);
    }

    /**
     * Returns once the registration's thread has ended (within a call budget), not merely once its
     * executor says it terminated: that happens while the thread is still on its way out.
     */
    private void awaitThreadEnded(DaemonLoop l) {
        try {
            if (!l.awaitEnded(settings.callBudgetMillis())) {
                LOG.warn("thread {} did not stop; it is a daemon and will not keep the JVM alive", THREAD_NAME);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void deregister() {
        if (supervisor != null) {
            supervisor.cancel(false);
        }
        closeKeyWatch();    // the revoke deletes the key: that deletion is ours
        closeKeepAlive();
        long lease = leaseId;
        leaseId = 0;
        currentLease = 0;
        try {
            if (client != null && lease != 0) {
                // Revoking deletes every key attached to the lease, and only those: if another process
                // has taken the key over meanwhile, its entry stays.
                client.getLeaseClient().revoke(lease).get(settings.callBudgetMillis(), TimeUnit.MILLISECONDS);
                LOG.debug("worker {} left etcd: lease {} revoked, key {} deleted", worker, lease, keyText);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            LOG.warn("worker {}: cannot remove etcd key {} on {} ({}); it vanishes when its lease expires within {} s",
                    worker, keyText, settings.endpointList(), EtcdFailures.describe(e), grantedTtlSeconds);
        } finally {
            closeClient();
        }
    }

    /** E.g. {@code etcd key /rollcall/workers/10.0.0.5_7001 (lease 10 s) at http://10.0.0.1:2379}; no secrets. */
    @Override
    public String description() {
        return "etcd key " + keyText + " (lease " + ttlSeconds + " s) at " + settings.endpointList();
    }

    @Override
    public String toString() {
        return description();
    }
}
