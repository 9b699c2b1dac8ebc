package dev.rollcall.core;

import dev.rollcall.api.registry.FleetEvent;
import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands each published snapshot to everyone who follows the fleet: readers (one volatile read),
 * callers blocked in an {@code await}, snapshot listeners and event listeners. This is where another
 * kind of follower (a gRPC name resolver) subscribes.
 *
 * <p>{@link #publish} runs on the resolver's serial context; listeners run on the listener executor,
 * one at a time, each snapshot once per listener in increasing number; awaiters on their own
 * threads. Reads and registrations are thread-safe.
 */
final class SnapshotFanOut {

    private static final Logger log = LoggerFactory.getLogger(SnapshotFanOut.class);

    private final String name;
    private final ExecutorService listenerExecutor;
    private final Ticker ticker;
    private final Object published = new Object();
    private final List<Subscriber> listeners = new CopyOnWriteArrayList<>();
    private final List<FleetEventListener> eventListeners = new CopyOnWriteArrayList<>();
    private volatile FleetSnapshot current;
    private volatile boolean closed;
    /** The snapshot the last events were computed up to; touched only on the listener thread. */
    private FleetSnapshot eventBaseline;

    /** A listener and the last snapshot it was given; touched only on the listener thread. */
    private static final class Subscriber {
        final SnapshotListener listener;
        long delivered = -1;

        Subscriber(SnapshotListener listener) {
            this.listener = listener;
        }
    }

    SnapshotFanOut(String name, FleetSnapshot initial, ExecutorService listenerExecutor, Ticker ticker) {
        this.name = name;
        this.current = initial;
        this.listenerExecutor = listenerExecutor;
        this.ticker = ticker;
    }

    FleetSnapshot current() {
        return current;
    }

    boolean closed() {
        return closed;
    }

    /** Makes {@code snapshot} current and tells every follower. On the serial context. */
    void publish(FleetSnapshot snapshot) {
        current = snapshot;
        synchronized (published) {
            published.notifyAll();
        }
        log.debug("resolver {} published {}", name, snapshot);
        if (!listeners.isEmpty() || !eventListeners.isEmpty()) {
            try {
                listenerExecutor.execute(() -> {
                    listeners.forEach(l -> deliver(l, snapshot));
                    emitEvents(snapshot);
                });
            } catch (RejectedExecutionException closing) {
                log.debug("resolver {} is closing; snapshot {} not delivered to listeners", name, snapshot.number());
            }
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
     * takes: a slow condition delays only its caller, never the resolver's thread (it used to hold
     * the lock, and the resolver's thread spun on it for as long as the condition ran).
     */
    FleetSnapshot awaitSatisfying(Duration timeout, Predicate<? super FleetSnapshot> done) throws InterruptedException {
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

    SnapshotListener.Registration addListener(SnapshotListener listener) {
        Objects.requireNonNull(listener, "listener");
        Subscriber subscriber = new Subscriber(listener);
        // The snapshot current at the call comes first, as WorkerResolver.addListener promises; a
        // publish before the task below runs finds no subscriber to queue a delivery for, so the
        // task also hands over whatever is current by then (deliver skips what is not newer).
        FleetSnapshot atCall = current;
        listenerExecutor.execute(() -> {
            listeners.add(subscriber);
            deliver(subscriber, atCall);
            deliver(subscriber, current);
        });
        return () -> listeners.remove(subscriber);
    }

    SnapshotListener.Registration addEventListener(FleetEventListener listener) {
        Objects.requireNonNull(listener, "listener");
        listenerExecutor.execute(() -> {
            if (eventBaseline == null) {
                eventBaseline = current;
            }
            eventListeners.add(listener);
        });
        return () -> eventListeners.remove(listener);
    }

    /** On the listener thread: the events from the last baseline to {@code snapshot}. */
    private void emitEvents(FleetSnapshot snapshot) {
        if (eventListeners.isEmpty()) {
            eventBaseline = null;
            return;
        }
        if (eventBaseline == null || snapshot.number() <= eventBaseline.number()) {
            eventBaseline = eventBaseline == null ? snapshot : eventBaseline;
            return;
        }
        List<FleetEvent> events = FleetEvent.between(eventBaseline, snapshot);
        eventBaseline = snapshot;
        for (FleetEvent event : events) {
            for (FleetEventListener l : eventListeners) {
                try {
                    l.onEvent(event);
                } catch (RuntimeException e) {
                    log.warn("event listener {} failed on {}", l, event, e);
                }
            }
        }
    }

    /** On the listener thread: each snapshot once per listener, in increasing number. */
    private void deliver(Subscriber subscriber, FleetSnapshot snapshot) {
        if (snapshot.number() <= subscriber.delivered || !listeners.contains(subscriber)) {
            return;
        }
        subscriber.delivered = snapshot.number();
        try {
            subscriber.listener.onSnapshot(snapshot);
        } catch (RuntimeException e) {
            log.warn("snapshot listener {} failed on snapshot {}", subscriber.listener, snapshot.number(), e);
        }
    }

    /** Lets queued deliveries finish (up to 5 s), stops the listener thread and wakes every awaiter. */
    void close() {
        closed = true;
        listenerExecutor.shutdown();
        try {
            listenerExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        listenerExecutor.shutdownNow();
        synchronized (published) {
            published.notifyAll();
        }
    }
}
