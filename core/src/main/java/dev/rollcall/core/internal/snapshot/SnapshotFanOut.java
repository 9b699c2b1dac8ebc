package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.Ticker;
import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one owner of a resolver's current snapshot: the fleet tracker publishes each new one here,
 * and from here it reaches everyone who follows the fleet: the resolver's code that must see it
 * before anyone reads it ({@link #beforeEachPublish}, exact drain's leases), readers (the facade's
 * read path is one volatile read of {@link #current()}), callers blocked in an {@code await},
 * snapshot listeners and event listeners, and the resolver's own followers (the {@code rollcall:}
 * gRPC name resolvers).
 *
 * <p>Every listener has a mailbox of its own: one snapshot waits in it at most, a newer one replaces
 * it (latest wins), and deliveries run one at a time, each snapshot newer than the last one given
 * (increasing numbers), the first one being the snapshot current at registration. A user's listener
 * runs on a thread of its own ({@code rollcall-listeners-<name>-N}, for as long as it is registered),
 * so that one that blocks (a slow replan) delays only itself: the others, and the resolver, go on,
 * and it finds the newest snapshot when it returns. Followers are the resolver's own code that only
 * hands a snapshot on without blocking; they share one thread ({@code rollcall-followers-<name>}) and
 * never wait behind a user's listener.
 *
 * <p>{@link #publish} runs on the resolver's serial context and never blocks; awaiters run on their
 * own threads. Reads and registrations are thread-safe.
 */
public final class SnapshotFanOut {

    private static final Logger log = LoggerFactory.getLogger(SnapshotFanOut.class);

    private final String name;
    /** A thread for one user's listener: called at each registration. */
    private final Supplier<ExecutorService> listenerThread;
    private final ExecutorService followerThread;
    private final Ticker ticker;
    private final Object published = new Object();
    private final List<Mailbox> mailboxes = new CopyOnWriteArrayList<>();
    /** Run on the serial context with each new snapshot before it is current; registered before the first. */
    private final List<Consumer<FleetSnapshot>> beforePublish = new CopyOnWriteArrayList<>();
    private volatile FleetSnapshot current;
    /** Whether candidates were known (from discovery or the cache file) when {@link #current} was published. */
    private volatile boolean candidatesKnown;
    private volatile boolean closed;

    /**
     * One follower's deliveries: a snapshot that waits (only the newest) and whether a delivery task
     * is queued or running. Runs of {@link #run} never overlap: the {@code scheduled} flag hands the
     * mailbox from one to the next, with its fields.
     */
    private abstract class Mailbox implements Runnable {
        private final ExecutorService executor;
        private final boolean ownThread;
        private final AtomicReference<FleetSnapshot> waiting = new AtomicReference<>();
        private final AtomicBoolean scheduled = new AtomicBoolean();
        private volatile boolean removed;
        /** Given before anything else (the snapshot current at registration), then null. */
        private FleetSnapshot first;
        /** The number of the last snapshot given. */
        private long delivered;

        Mailbox(ExecutorService executor, boolean ownThread, FleetSnapshot first, long delivered) {
            this.executor = executor;
            this.ownThread = ownThread;
            this.first = first;
            this.delivered = delivered;
        }

        /** Called for each snapshot, newer than the last, on the mailbox's thread. */
        abstract void deliver(FleetSnapshot snapshot);

        /** {@code snapshot} waits for the next delivery, unless a newer one already does. */
        final void offer(FleetSnapshot snapshot) {
            waiting.accumulateAndGet(snapshot, (old, now) -> old == null || now.number() > old.number() ? now : old);
            schedule();
        }

        private void schedule() {
            if (removed || !scheduled.compareAndSet(false, true)) {
                return;
            }
            try {
                executor.execute(this);
            } catch (RejectedExecutionException closing) {
                scheduled.set(false);
                log.debug("resolver {} is closing; a snapshot was not delivered to {}", name, this);
            }
        }

        @Override
        public final void run() {
            try {
                for (FleetSnapshot s = next(); s != null && !removed; s = next()) {
                    if (s.number() > delivered) {
                        delivered = s.number();
                        try {
                            deliver(s);
                        } catch (RuntimeException e) {
                            log.warn("{} failed on snapshot {}", this, s.number(), e);
                        }
                    }
                }
            } finally {
                scheduled.set(false);
            }
            if (waiting.get() != null) {
                schedule(); // offered after the last look, before the flag was cleared
            }
        }

        private FleetSnapshot next() {
            FleetSnapshot f = first;
            if (f != null) {
                first = null;
                return f;
            }
            return waiting.getAndSet(null);
        }

        /** No more deliveries; one under way may complete. */
        final void remove() {
            removed = true;
            mailboxes.remove(this);
            if (ownThread) {
                executor.shutdown();
            }
        }
    }

    private final class ListenerBox extends Mailbox {
        private final Consumer<FleetSnapshot> listener;
        /** The user's listener, for the logs. */
        private final Object shownAs;

        ListenerBox(ExecutorService executor, boolean ownThread, Consumer<FleetSnapshot> listener, Object shownAs,
                    FleetSnapshot first) {
            super(executor, ownThread, first, -1);
            this.listener = listener;
            this.shownAs = shownAs;
        }

        @Override
        void deliver(FleetSnapshot snapshot) {
            listener.accept(snapshot);
        }

        @Override
        public String toString() {
            return "snapshot listener " + shownAs;
        }
    }

    /** Events from the last snapshot it was given to each newer one: a slow one gets the sum of what changed. */
    private final class EventBox extends Mailbox {
        private final Consumer<FleetEvent> listener;
        /** The user's listener, for the logs. */
        private final Object shownAs;
        private FleetSnapshot baseline;

        EventBox(ExecutorService executor, Consumer<FleetEvent> listener, Object shownAs, FleetSnapshot baseline) {
            super(executor, true, null, baseline.number());
            this.listener = listener;
            this.shownAs = shownAs;
            this.baseline = baseline;
        }

        @Override
        void deliver(FleetSnapshot snapshot) {
            List<FleetEvent> events = FleetEvent.between(baseline, snapshot);
            baseline = snapshot;
            for (FleetEvent event : events) {
                try {
                    listener.accept(event);
                } catch (RuntimeException e) {
                    log.warn("event listener {} failed on {}", shownAs, event, e);
                }
            }
        }

        @Override
        public String toString() {
            return "event listener " + shownAs;
        }
    }

    /**
     * @param listenerThread a new single thread for each user's listener (shut down when it is
     *                       removed or the fan-out closes)
     * @param followerThread where every follower's deliveries run
     */
    public SnapshotFanOut(String name, FleetSnapshot initial, Supplier<ExecutorService> listenerThread,
                   ExecutorService followerThread, Ticker ticker) {
        this.name = name;
        this.current = initial;
        this.listenerThread = listenerThread;
        this.followerThread = followerThread;
        this.ticker = ticker;
    }

    /** The current snapshot: one volatile read. Any thread. */
    public FleetSnapshot current() {
        return current;
    }

    /** Whether candidates were known (from discovery or the cache file) as of the current snapshot. Any thread. */
    public boolean candidatesKnown() {
        return candidatesKnown;
    }

    /**
     * Runs {@code hook} on the serial context with each snapshot published from now on, before it
     * becomes current: what the hook records (exact drain's lease slot) is in place when anyone
     * reads the snapshot. Must be quick and must not block; register before the resolver starts.
     */
    public void beforeEachPublish(Consumer<FleetSnapshot> hook) {
        beforePublish.add(Objects.requireNonNull(hook, "hook"));
    }

    public boolean closed() {
        return closed;
    }

    /**
     * Makes {@code snapshot} current, published when candidates were known or not
     * ({@code candidatesKnown}), and tells every follower; never blocks. On the serial context.
     */
    public void publish(FleetSnapshot snapshot, boolean candidatesKnown) {
        for (Consumer<FleetSnapshot> hook : beforePublish) {
            hook.accept(snapshot);
        }
        this.candidatesKnown = candidatesKnown;
        current = snapshot;
        synchronized (published) {
            published.notifyAll();
        }
        log.debug("resolver {} published {}", name, snapshot);
        for (Mailbox m : mailboxes) {
            m.offer(snapshot);
        }
    }

    /**
     * Waits until the current snapshot satisfies {@code done}, {@code timeout} passes on the ticker,
     * or the fan-out closes; returns the snapshot current then. Nothing polls: every publish wakes it.
     */
    FleetSnapshot awaitUntil(Duration timeout, Predicate<? super FleetSnapshot> done) throws InterruptedException {
        FleetSnapshot s = awaitSatisfying(timeout, done);
        return s != null ? s : current;
    }

    /**
     * Waits as {@link #awaitUntil} does; returns the snapshot that satisfied {@code done}, or null
     * when none did in time or the fan-out closed (so that a caller need not test it again).
     * {@code done} is the caller's code and runs on the caller's thread outside the lock a publish
     * takes: a slow condition delays only its caller, never the resolver's thread (which would
     * otherwise wait on the lock for as long as the condition runs).
     */
    public FleetSnapshot awaitSatisfying(Duration timeout, Predicate<? super FleetSnapshot> done) throws InterruptedException {
        long deadline = ticker.read() + timeout.toNanos();
        while (true) {
            FleetSnapshot s = current;
            if (done.test(s)) {
                return s;
            }
            long left = deadline - ticker.read();
            if (left <= 0 || closed) {
                return null;
            }
            synchronized (published) {
                if (current == s && !closed) { // else a newer one came while the condition ran: test it
                    TimeUnit.NANOSECONDS.timedWait(published, left);
                }
            }
        }
    }

    /**
     * Calls {@code listener} with the snapshot current now, then with newer ones, on a thread of its
     * own (see the class's comment).
     */
    public Subscription addListener(Consumer<FleetSnapshot> listener, Object shownAs) {
        Objects.requireNonNull(listener, "listener");
        return register(new ListenerBox(listenerThread.get(), true, listener, shownAs, current));
    }

    /**
     * As {@link #addListener}, for the resolver's own code that hands a snapshot on and never
     * blocks (a {@code rollcall:} name resolver): on the followers' thread, never behind a user's
     * listener.
     */
    public Subscription addFollower(Consumer<FleetSnapshot> follower) {
        Objects.requireNonNull(follower, "follower");
        return register(new ListenerBox(followerThread, false, follower, follower, current));
    }

    /** Calls {@code listener} with the events of each snapshot newer than the one current now, on a thread of its own. */
    public Subscription addEventListener(Consumer<FleetEvent> listener, Object shownAs) {
        Objects.requireNonNull(listener, "listener");
        return register(new EventBox(listenerThread.get(), listener, shownAs, current));
    }

    private Subscription register(Mailbox box) {
        if (closed) {
            box.remove();
            return () -> { };
        }
        mailboxes.add(box);
        box.schedule();
        // A publish between reading current (for the box) and adding the box found no box to offer
        // it to: offer what is current now (skipped unless newer).
        box.offer(current);
        return box::remove;
    }

    /**
     * Lets the deliveries under way finish (up to 5 s in all), stops every listener's thread and the
     * followers' thread, and wakes every awaiter.
     */
    public void close() {
        closed = true;
        List<ExecutorService> threads = new ArrayList<>();
        for (Mailbox m : mailboxes) {
            if (m.ownThread) {
                threads.add(m.executor);
            }
        }
        threads.add(followerThread);
        threads.forEach(ExecutorService::shutdown); // what is queued still runs; nothing new is taken
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        try {
            for (ExecutorService t : threads) {
                t.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        threads.forEach(ExecutorService::shutdownNow);
        synchronized (published) {
            published.notifyAll();
        }
    }
}
