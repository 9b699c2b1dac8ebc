package dev.rollcall.core.internal.drain;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.serial.SerialContext;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exact drain, the coordinator's side: which draining workers this resolver still holds, and the
 * {@code ReleaseWorker} call for each once it lets go (W18-W22 of docs/protocol.md).
 *
 * <p>A worker is let go when the resolver has published a snapshot that does not list it and no
 * open lease ({@link LeaseTable}) holds an older snapshot that does. Two kinds of worker wait for
 * that: one whose own answer says {@code DRAINING} (then {@code ReleaseWorker{holder_id,
 * instance_id}} is sent once over its kept channel, with the holder id {@link HolderIds} gives that
 * worker: OK ends it; {@code UNAVAILABLE} and {@code DEADLINE_EXCEEDED} are retried
 * {@link #RETRY_NANOS} later, {@link #MAX_ATTEMPTS} times in all; anything else,
 * {@code FAILED_PRECONDITION} from a successor, {@code NOT_FOUND} from a worker where the id holds
 * nothing (its stream ended) or {@code UNIMPLEMENTED} from a worker before exact drain included, is
 * logged once and not retried), and one that left discovery
 * while its stream lives (its kept connection stays open until it is let go: closing it is the
 * release). An answer that is not {@code DRAINING} (a resume), or one of another instance (a restart
 * in place), forgets what was released: a later drain is released again.
 *
 * <p>Re-evaluated on every publish and when the last lease of an older snapshot closes; when nothing
 * drains, that close costs one volatile read ({@link #leaseGone()}). Confined to the resolver's
 * serial context but for {@link #leaseGone()} (any thread).
 *
 * <p>What a worker says back is its own text: every log line escapes and bounds it
 * ({@link PeerText#escape}), and never holds a holder id in full ({@link HolderIds#tag}).
 */
public final class DrainReleases implements ExactDrain {

    private static final Logger log = LoggerFactory.getLogger("dev.rollcall.core.WorkerResolver");

    /** How long after a failed release it is sent again. */
    public static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** Releases sent per drain at most: about 2 s of retries, then the worker's own bound applies. */
    public static final int MAX_ATTEMPTS = 8;
    /** The most of a worker's status text a log line quotes. */
    private static final int MAX_SAID_CHARS = 200;

    /** Sends one {@code ReleaseWorker}; {@code then} gets its status on any thread, exactly once. */
    public interface Releaser {
        void release(String url, String holderId, String instanceId, Consumer<Status> then);
    }

    private enum Stage { HELD, SENDING, WAITING_TO_RETRY, RELEASED, LEFT }

    /** One draining (or departed) worker, by URL. */
    private static final class Drain {
        final String instanceId;
        final long since;
        Stage stage = Stage.HELD;
        int attempts;
        SerialContext.Timer retry;

        Drain(String instanceId, long since) {
            this.instanceId = instanceId;
            this.since = since;
        }
    }

    private final SerialContext context;
    private final Releaser releaser;
    private final HolderIds holderIds;
    private final LeaseTable leases;
    /** Told when a worker that left discovery is let go, so that its kept connection closes. */
    private Runnable leaverFree = () -> { };
    private final Map<String, Drain> byUrl = new HashMap<>();
    /** Workers held now ({@link Stage#HELD} or {@link Stage#LEFT}): any thread reads it. */
    private volatile int held;
    private final AtomicBoolean evaluationQueued = new AtomicBoolean();
    private boolean closed;

    /** {@code holderIds}: the one the resolver's watch requests use, so that each worker's release carries its id. */
    public DrainReleases(SerialContext context, Releaser releaser, HolderIds holderIds, FleetSnapshot initial) {
        this.context = context;
        this.releaser = releaser;
        this.holderIds = holderIds;
        this.leases = new LeaseTable(initial, this::leaseGone);
    }

    /** The leases of this resolver's snapshots. */
    @Override
    public LeaseTable leases() {
        return leases;
    }

    /** Where a departed worker's release (closing its kept connection) is asked for. */
    @Override
    public void onLeaverFree(Runnable then) {
        this.leaverFree = then;
    }

    /** A snapshot is published: leases are taken on it from now on; who was let go is released. */
    @Override
    public void published(FleetSnapshot snapshot) {
        leases.publish(snapshot);
        evaluate();
    }

    /**
     * The worker at {@code url} answered, as instance {@code instanceId}, that it is {@code said}
     * (its own word, not discovery's label).
     */
    @Override
    public void answered(String url, String instanceId, ServingState said) {
        if (closed) {
            return;
        }
        Drain d = byUrl.get(url);
        if (said != ServingState.DRAINING) {
            if (d != null && d.stage != Stage.LEFT) {
                forget(url, d); // resumed: the worker forgot every release; a later drain is released again
            }
            return;
        }
        if (d != null && d.instanceId.equals(instanceId)) {
            return; // the same drain again (a heartbeat, a new stream of the same process)
        }
        if (d != null) {
            forget(url, d); // another process at the address: its drain is another one
        }
        byUrl.put(url, new Drain(instanceId, context.nanoTime()));
        held++;
        queueEvaluation(); // a worker never listed is let go without waiting for a publish
    }

    /** The worker at {@code url} left discovery; its kept connection is open until {@link #holdsLeaver} says no. */
    @Override
    public void left(String url, String instanceId) {
        if (closed) {
            return;
        }
        Drain d = byUrl.get(url);
        if (d != null) {
            forget(url, d); // whatever it was (held, released, or already a leaver): counted once from here
        }
        Drain leaving = new Drain(instanceId == null ? "" : instanceId, d != null ? d.since : context.nanoTime());
        leaving.stage = Stage.LEFT;
        byUrl.put(url, leaving);
        held++;
        queueEvaluation();
    }

    /** Whether the worker at {@code url}, which left discovery, must keep its connection open: a lease holds it. */
    @Override
    public boolean holdsLeaver(String url) {
        Drain d = byUrl.get(url);
        return d != null && d.stage == Stage.LEFT;
    }

    /** The last lease of an older snapshot closed (any thread): re-evaluate, unless nothing drains. */
    void leaseGone() {
        if (held > 0) {
            queueEvaluation();
        }
    }

    private void queueEvaluation() {
        if (evaluationQueued.compareAndSet(false, true)) {
            context.execute(() -> {
                evaluationQueued.set(false);
                evaluate();
            });
        }
    }

    /** Lets go of every held worker that no snapshot in use lists. */
    private void evaluate() {
        if (closed || held == 0) {
            leases.holds(""); // forgets older slots whose leases all closed
            return;
        }
        List<String> free = null;
        boolean leaverLetGo = false;
        for (Map.Entry<String, Drain> e : byUrl.entrySet()) {
            Drain d = e.getValue();
            if ((d.stage != Stage.HELD && d.stage != Stage.LEFT) || leases.currentLists(e.getKey())
                    || leases.holds(e.getKey())) {
                continue;
            }
            if (free == null) {
                free = new ArrayList<>();
            }
            free.add(e.getKey());
        }
        if (free == null) {
            return;
        }
        for (String url : free) {
            Drain d = byUrl.get(url);
            held--;
            if (d.stage == Stage.LEFT) {
                byUrl.remove(url);
                leaverLetGo = true;
                log.debug("worker {} let go {} ms after it left discovery: its connection closes", url,
                        millisSince(d.since));
            } else {
                send(url, d);
            }
        }
        if (leaverLetGo) {
            leaverFree.run();
        }
    }

    private void send(String url, Drain d) {
        d.stage = Stage.SENDING;
        d.attempts++;
        releaser.release(url, holderIds.of(url), d.instanceId, status -> context.execute(() -> sent(url, d, status)));
    }

    private void sent(String url, Drain d, Status status) {
        if (closed || byUrl.get(url) != d || d.stage != Stage.SENDING) {
            return; // forgotten meanwhile (resumed, restarted, left)
        }
        Status.Code code = status.getCode();
        if (code == Status.Code.OK) {
            d.stage = Stage.RELEASED;
            log.debug("worker {} (instance {}) released {} ms after its drain", url, PeerText.escape(d.instanceId),
                    millisSince(d.since));
        } else if ((code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED)
                && d.attempts < MAX_ATTEMPTS) {
            d.stage = Stage.WAITING_TO_RETRY;
            d.retry = context.schedule(() -> {
                if (!closed && byUrl.get(url) == d && d.stage == Stage.WAITING_TO_RETRY) {
                    send(url, d);
                }
            }, RETRY_NANOS);
        } else {
            d.stage = Stage.RELEASED; // nothing more to say to this process
            if (code == Status.Code.UNIMPLEMENTED) {
                log.debug("worker {} does not implement ReleaseWorker (before exact drain): it keeps its quiet period",
                        url);
            } else if (code == Status.Code.NOT_FOUND) {
                log.info("worker {}: ReleaseWorker for instance {} refused, this resolver's holder id {} holds nothing "
                        + "there (its watch stream ended, which let the worker go): {}; not retried", url,
                        PeerText.escape(d.instanceId), HolderIds.tag(holderIds.of(url)), said(url, status));
            } else {
                log.info("worker {}: ReleaseWorker for instance {} failed after {} attempts: {} {}; not retried", url,
                        PeerText.escape(d.instanceId), d.attempts, code, said(url, status));
            }
        }
    }

    /**
     * The worker's own words in {@code status}, escaped and bounded, with this resolver's holder id
     * for it cut to its tag should the worker have echoed it (a log line never holds it whole).
     */
    private String said(String url, Status status) {
        String text = status.getDescription();
        if (text == null) {
            return "(no description)";
        }
        String id = holderIds.of(url);
        return "'" + PeerText.escape(text.replace(id, HolderIds.tag(id)), MAX_SAID_CHARS) + "'";
    }

    private void forget(String url, Drain d) {
        if (d.stage == Stage.HELD || d.stage == Stage.LEFT) {
            held--;
        }
        cancelRetry(d);
        byUrl.remove(url);
    }

    /** The worker at {@code url} is gone for good (its connection closed): nothing more to release. */
    public void gone(String url) {
        Drain d = byUrl.get(url);
        if (d != null) {
            forget(url, d);
        }
    }

    private static void cancelRetry(Drain d) {
        if (d.retry != null) {
            d.retry.cancel();
        }
    }

    private long millisSince(long since) {
        return TimeUnit.NANOSECONDS.toMillis(context.nanoTime() - since);
    }

    /** Stops: nothing more is sent (the streams end with the resolver, which releases every worker). */
    @Override
    public void close() {
        closed = true;
        byUrl.values().forEach(DrainReleases::cancelRetry);
        byUrl.clear();
        held = 0;
    }
}
