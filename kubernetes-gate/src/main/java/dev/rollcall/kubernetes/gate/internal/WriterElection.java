package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.kubernetes.gate.internal.GateKeys.LeaseTimings;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One writer among the replicas of {@code rollcall serve}: fabric8's leader election on a
 * {@code coordination.k8s.io/v1} Lease, telling {@code leading} when this replica may write
 * ({@code true}) and when it must stop ({@code false}).
 *
 * <ul>
 *   <li><b>Stops before another can start.</b> fabric8 gives up leading only at its next try after
 *       the renew deadline, and a try can hang for a whole request timeout. So this class keeps its
 *       own clock: each successful renewal allows writing until its {@code renewTime} plus
 *       {@code renew-deadline}, and a timer of its own (not fabric8's threads, which may be stuck in
 *       a request) withdraws the right then. Another replica may take the lease only after
 *       {@code renewTime} plus {@code lease.duration}: the difference is the margin for clock skew
 *       and a patch already in flight.</li>
 *   <li><b>An identity per process</b> ({@link #uniqueIdentity}): fabric8 takes a Lease whose
 *       {@code holderIdentity} equals its own as its own, so two processes sharing a name would
 *       both write.</li>
 *   <li><b>Hands over on close</b>: the lease is released (fabric8's {@code releaseOnCancel}), so
 *       the next replica takes it at its next try, not after a whole lease duration.</li>
 *   <li><b>Without the right</b> to get, create or patch leases (HTTP 403) it logs one error naming
 *       the verb, the resource and the namespace, writes nothing, and tries again once per lease
 *       duration; nothing else of the process depends on it.</li>
 * </ul>
 *
 * <p>Threading: {@code leading} is called with this object's lock held, from fabric8's threads, the
 * fence timer or {@link #close()}; it must be quick and must not call back. {@link #close()} blocks
 * until the lease is released or releasing failed (at most a request timeout or two).
 */
public final class WriterElection implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WriterElection.class);
    /** The holder fabric8 is shown while this account may not use the lease: it waits, quietly. */
    static final String NO_ACCESS = "(no access to leases)";

    private final KubernetesClient client;
    private final String namespace;
    private final String leaseName;
    private final String identity;
    private final LeaseTimings timings;
    private final Consumer<Boolean> leading;
    private final ScheduledExecutorService timer;
    private final Object lock = new Object();
    /** fabric8 says this replica holds the lease; guarded by {@link #lock}. */
    private boolean holding;
    /** {@link System#nanoTime()} until which the last renewal lets this replica write; guarded. */
    private long writableUntil;
    /** What {@link #leading} was last told; guarded. */
    private boolean writing;
    /** Writing stopped for want of a renewal while still holding (logged); guarded. */
    private boolean fenced;
    /** The running election (fabric8's elector runs once); guarded. */
    private CompletableFuture<?> term;
    private boolean closed;
    /** Until when a forbidden create or patch keeps this replica from trying again ({@code nanoTime}). */
    private volatile long forbiddenUntil;
    private volatile boolean forbiddenLogged;

    public WriterElection(KubernetesClient client, String namespace, String leaseName, String identity,
                          LeaseTimings timings, Consumer<Boolean> leading) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.leaseName = Objects.requireNonNull(leaseName, "leaseName");
        this.identity = Objects.requireNonNull(identity, "identity");
        this.timings = Objects.requireNonNull(timings, "timings");
        this.leading = Objects.requireNonNull(leading, "leading");
        this.timer = Executors.newSingleThreadScheduledExecutor(NamedThreads.daemon("rollcall-k8s-gate-lease"));
        this.writableUntil = System.nanoTime();
        this.forbiddenUntil = writableUntil;    // nanoTime may be negative: 0 is no "long ago"
    }

    /**
     * This process's name in the Lease: {@code configured} (else {@code HOSTNAME}, else
     * {@code rollcall}), then {@code _} and a random suffix, as client-go's controllers do. Always
     * suffixed: a replica restarted in place under the same pod name, or two replicas given the same
     * {@code rollcall.kubernetes.identity}, must never take each other's lease for their own.
     */
    public static String uniqueIdentity(Optional<String> configured, Map<String, String> env) {
        String base = configured.map(String::strip).filter(s -> !s.isEmpty())
                .or(() -> Optional.ofNullable(env.get("HOSTNAME")).map(String::strip).filter(s -> !s.isEmpty()))
                .orElse("rollcall");
        return base + "_" + UUID.randomUUID();
    }

    /** This replica's {@code holderIdentity}. */
    public String identity() {
        return identity;
    }

    /** Starts campaigning; returns at once. */
    public void start() {
        synchronized (lock) {
            newTerm();
        }
    }

    /** Guarded by {@link #lock}. */
    private void newTerm() {
        if (closed) {
            return;
        }
        CompletableFuture<?> started = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
                        .withName("rollcall-kubernetes-gate")
                        .withLock(new GuardedLease(new LeaseLock(namespace, leaseName, identity)))
                        .withLeaseDuration(timings.duration())
                        .withRenewDeadline(timings.renewDeadline())
                        .withRetryPeriod(timings.retryPeriod())
                        .withLeaderCallbacks(new LeaderCallbacks(this::started, this::stopped, this::newHolder))
                        .withReleaseOnCancel(true)
                        .build())
                .build().start();
        term = started;
        // An elector leads once: after a lost lease, a new one campaigns again.
        started.whenComplete((ignored, failure) -> {
            if (failure != null && !(failure instanceof CancellationException)) {
                LOG.warn("k8s gate: the election for lease {}/{} ended: {}; campaigning again", namespace,
                        leaseName, PeerText.escape(String.valueOf(failure), 512));
            }
            synchronized (lock) {
                if (!closed && term == started) {
                    schedule(() -> {
                        synchronized (lock) {
                            newTerm();
                        }
                    }, timings.retryPeriod().toNanos());
                }
            }
        });
    }

    private void started() {
        synchronized (lock) {
            holding = true;
            apply();
        }
        LOG.info("k8s gate: {} holds lease {}/{}: this replica writes the pods' conditions",
                PeerText.escape(identity, 256), namespace, leaseName);
    }

    private void stopped() {
        synchronized (lock) {
            holding = false;
            apply();
        }
        LOG.info("k8s gate: {} no longer holds lease {}/{}: this replica stopped writing",
                PeerText.escape(identity, 256), namespace, leaseName);
    }

    private void newHolder(String holder) {
        if (holder != null && !holder.isEmpty() && !holder.equals(identity) && !holder.equals(NO_ACCESS)) {
            LOG.info("k8s gate: {} holds lease {}/{} and writes; this replica waits",
                    PeerText.escape(holder, 256), namespace, leaseName);
        }
    }

    /** A create or patch of the Lease naming this replica succeeded: it may write a while longer. */
    private void renewed(ZonedDateTime renewTime) {
        synchronized (lock) {
            // From the record's own renewTime (taken before the request), not from now: conservative.
            long age = Math.max(0, Duration.between(renewTime, ZonedDateTime.now(ZoneOffset.UTC)).toNanos());
            long until = System.nanoTime() - age + timings.renewDeadline().toNanos();
            if (until - writableUntil > 0) {
                writableUntil = until;
            }
            apply();
            schedule(() -> {
                synchronized (lock) {
                    apply();
                }
            }, until - System.nanoTime());
        }
    }

    /** Guarded by {@link #lock}: tells {@link #leading} when whether this replica may write changed. */
    private void apply() {
        boolean renewedRecently = writableUntil - System.nanoTime() > 0;
        boolean may = holding && renewedRecently && !closed;
        if (may != writing) {
            writing = may;
            leading.accept(may);
            if (!may && holding && !closed) {
                fenced = true;
                LOG.warn("k8s gate: lease {}/{} not renewed within {}: this replica stopped writing before another"
                        + " may take the lease over", namespace, leaseName, timings.renewDeadline());
            } else if (may && fenced) {
                fenced = false;
                LOG.info("k8s gate: lease {}/{} renewed again: this replica writes again", namespace, leaseName);
            }
        }
        if (!holding) {
            fenced = false;
        }
    }

    private void schedule(Runnable task, long delayNanos) {
        try {
            timer.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            // close() stopped the timer: nothing is left to schedule.
        }
    }

    /** Stops writing, then releases the lease if this replica holds it. Idempotent. */
    @Override
    public void close() {
        CompletableFuture<?> running;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            apply();
            running = term;
        }
        // Outside the lock: cancelling releases the lease on this thread, and fabric8 calls back.
        if (running != null) {
            running.cancel(true);
        }
        timer.shutdownNow();
    }

    /**
     * fabric8's LeaseLock, watched: a successful create or patch naming this replica extends the
     * right to write; a 403 is logged once and shown to fabric8 as a lease held by {@link #NO_ACCESS},
     * so that it waits quietly instead of failing at every try.
     */
    private final class GuardedLease implements Lock {

        private final LeaseLock lease;

        GuardedLease(LeaseLock lease) {
            this.lease = lease;
        }

        @Override
        public LeaderElectionRecord get(KubernetesClient c) {
            LeaderElectionRecord record;
            try {
                record = lease.get(c);
            } catch (KubernetesClientException e) {
                if (e.getCode() != HttpURLConnection.HTTP_FORBIDDEN) {
                    throw e;
                }
                forbidden("get", e);
                return heldWithoutAccess();
            }
            return forbiddenUntil - System.nanoTime() > 0 ? heldWithoutAccess() : record;
        }

        @Override
        public void create(KubernetesClient c, LeaderElectionRecord record) {
            try {
                lease.create(c, record);
            } catch (KubernetesClientException e) {
                throw checked("create", e);
            }
            wrote(record);
        }

        @Override
        public void update(KubernetesClient c, LeaderElectionRecord record) {
            try {
                lease.update(c, record);
            } catch (KubernetesClientException e) {
                throw checked("patch", e);   // fabric8 updates a Lease by a JSON merge patch
            }
            wrote(record);
        }

        private KubernetesClientException checked(String verb, KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_FORBIDDEN) {
                forbidden(verb, e);
                // Retried once a lease duration: an operator's fixed Role is seen by then.
                forbiddenUntil = System.nanoTime() + timings.duration().toNanos();
            }
            return e;
        }

        private void wrote(LeaderElectionRecord record) {
            if (forbiddenLogged) {
                forbiddenLogged = false;
                LOG.info("k8s gate: this replica may use lease {}/{} again", namespace, leaseName);
            }
            if (identity.equals(record.getHolderIdentity())) {
                renewed(record.getRenewTime());
            }
        }

        private void forbidden(String verb, KubernetesClientException e) {
            if (!forbiddenLogged) {
                forbiddenLogged = true;
                LOG.error("k8s gate: forbidden to {} leases (coordination.k8s.io) in namespace {} (lease {}): {}."
                                + " No pod condition is written by this replica until its Role allows get, create"
                                + " and patch on leases; discovery and the fleet service go on", verb, namespace,
                        leaseName, PeerText.escape(String.valueOf(e.getMessage()), 512));
            }
        }

        private LeaderElectionRecord heldWithoutAccess() {
            ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
            return new LeaderElectionRecord(NO_ACCESS, timings.duration(), now, now, 0);
        }

        @Override
        public String identity() {
            return lease.identity();
        }

        @Override
        public String describe() {
            return lease.describe();
        }
    }
}
