package dev.rollcall.core;

import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.api.Backoff;
import dev.rollcall.core.internal.ProbeClient;
import io.grpc.ManagedChannel;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * When and how workers are probed: a queue with a concurrency limit, at most one probe in flight
 * per worker, retries with backoff after failures, refreshes after answers, one kept connection per
 * worker (optional) and the watch on it that notices a restart in place, or a host gone silent
 * ({@link StreamLiveness}: the stream's heartbeats; HTTP/2 keepalive on the link). What an outcome
 * means for the worker is the {@link Owner}'s business.
 *
 * <p>Confined to the resolver's serial context; probe callbacks hop back to it. Counters and
 * observers may be read and added from any thread.
 */
final class ProbeScheduler {

    /** The scheduler's part of a worker's state; touched only here, on the serial context. */
    static final class Slot {
        private Stage stage = Stage.IDLE;
        private SerialContext.Timer timer;          // the next retry or refresh
        private ProbeTransport.Link link;           // kept between probes when keep-channels is on
        private boolean watched;                    // a connection watch is registered on link
        private ProbeClient.Watch stream;           // the worker's WatchWorkerInfo stream (also while its probe is in flight)
        private StreamLiveness.Heard heard;         // when stream last said anything; set with stream
        private boolean unaryOnly;                  // the worker answered WatchWorkerInfo UNIMPLEMENTED
        private boolean shared;                     // link's channel was handed to the user: never replaced
        /** Told of the next probe that starts from now on (see {@link #requestFresh}); null when none waits. */
        private List<java.util.function.Consumer<ProbeOutcome>> fresh;
    }

    /** Where a worker is in the probe queue. */
    private enum Stage {
        IDLE, QUEUED, IN_FLIGHT,
        /** In flight, and asked for again meanwhile: probe once more when it finishes. */
        IN_FLIGHT_AGAIN
    }

    /** Told of outcomes and lost connections, on the serial context. */
    interface Owner {
        /** Whether {@code worker} is still a candidate (it may have left while being probed). */
        boolean tracks(TrackedWorker worker);

        /** A probe of {@code worker} finished; apply it before the scheduler plans the next one. */
        void probed(TrackedWorker worker, ProbeOutcome outcome);

        /**
         * {@code worker}'s kept connection dropped or its stream went silent ({@code why} says which,
         * e.g. "its connection dropped"); a probe over a new connection is requested next.
         */
        void connectionLost(TrackedWorker worker, String why);

        /** A probe finished or a timer fired: the time to publish what changed. */
        void settle();
    }

    /** Told of every finished probe, on the network thread that finished it: must be fast and thread-safe. */
    interface Observer {
        void probed(long latencyNanos, boolean answered);
    }

    private final SerialContext context;
    private final ProbeTransport transport;
    private final ProbeSettings settings;
    private final Backoff backoff;
    private final RandomGenerator jitter;
    private final Owner owner;
    private final ArrayDeque<TrackedWorker> queue = new ArrayDeque<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final List<Observer> observers = new CopyOnWriteArrayList<>();
    private int inFlight;
    /**
     * With {@code keep-channels=false}, links closed whose sockets are not gone yet: they count
     * against {@code probe.concurrency} too, so that the coordinator holds at most that many probe
     * sockets (the next probe used to connect while the last one's socket was still closing: 2 × the
     * limit).
     */
    private int closing;
    private boolean closed;
    /** Finds the streams that went silent: a worker's host cut off (no FIN, no RST). */
    private final StreamLiveness liveness;

    ProbeScheduler(SerialContext context, ProbeTransport transport, ProbeSettings settings, RandomGenerator jitter,
                   Owner owner) {
        this.context = context;
        this.transport = transport;
        this.settings = settings;
        this.backoff = Backoff.of(settings.backoffInitial(), settings.backoffMax());
        this.jitter = jitter;
        this.owner = owner;
        this.liveness = new StreamLiveness(context, settings, new StreamLiveness.Streams() {
            @Override
            public boolean current(TrackedWorker w, ProbeClient.Watch stream) {
                return !closed && owner.tracks(w) && w.probe.stream == stream;
            }

            @Override
            public void silent(TrackedWorker w, ProbeClient.Watch stream, long heartbeatMillis) {
                streamSilent(w, heartbeatMillis);
            }
        });
    }

    /** Probes {@code w} as soon as the concurrency limit allows; once more if a probe is in flight. */
    void request(TrackedWorker w) {
        Slot s = w.probe;
        switch (s.stage) {
            case IN_FLIGHT -> s.stage = Stage.IN_FLIGHT_AGAIN;
            case IDLE -> {
                cancelTimer(s);
                s.stage = Stage.QUEUED;
                queue.add(w);
                pump();
            }
            default -> { } // already queued or asked for again
        }
    }

    /**
     * Probes {@code w} once more with a probe that starts from now on (a probe in flight does not
     * count: it may have been answered by the process that was there before) and hands its outcome
     * to {@code then} on the context, after the owner applied it. A worker that leaves first hands
     * {@code then} a failure.
     */
    void requestFresh(TrackedWorker w, java.util.function.Consumer<ProbeOutcome> then) {
        Slot s = w.probe;
        if (s.fresh == null) {
            s.fresh = new java.util.ArrayList<>(2);
        }
        s.fresh.add(then);
        request(w);
    }

    /** Whether probes are in flight or waiting: answers keep coming. */
    boolean busy() {
        return inFlight > 0 || !queue.isEmpty();
    }

    /** Whether a probe of {@code w} is in flight now, or a caller waits for one ({@link #requestFresh}). */
    boolean busyWith(TrackedWorker w) {
        return w.probe.stage == Stage.IN_FLIGHT || w.probe.stage == Stage.IN_FLIGHT_AGAIN || w.probe.fresh != null;
    }

    /** {@code w} left: no more probes or timers, and its connection is closed. */
    void forget(TrackedWorker w) {
        cancelTimer(w.probe);
        closeLink(w.probe);
        tell(takeFresh(w.probe), new ProbeOutcome.Failed(io.grpc.Status.Code.CANCELLED, "left discovery"));
    }

    private static List<java.util.function.Consumer<ProbeOutcome>> takeFresh(Slot s) {
        List<java.util.function.Consumer<ProbeOutcome>> waiting = s.fresh;
        s.fresh = null;
        return waiting;
    }

    private static void tell(List<java.util.function.Consumer<ProbeOutcome>> waiting, ProbeOutcome outcome) {
        if (waiting != null) {
            waiting.forEach(then -> then.accept(outcome));
        }
    }

    /**
     * {@code w}'s channel for the user's own calls: the one it is probed over, opened now if it has
     * none, and from now on kept until the worker leaves or the resolver closes (a failed probe drops
     * the connection, not the channel).
     */
    ManagedChannel share(TrackedWorker w) {
        Slot s = w.probe;
        if (s.link == null) {
            s.link = transport.open(w.endpoint());
        }
        s.shared = true;
        return s.link.channel();
    }

    /** {@code w}'s open channel, if it has one (for schema fetches over the same connection). */
    ManagedChannel channel(TrackedWorker w) {
        ProbeTransport.Link link = w.probe.link;
        return link == null ? null : link.channel();
    }

    long sent() {
        return sent.get();
    }

    long failed() {
        return failed.get();
    }

    void addObserver(Observer observer) {
        observers.add(observer);
    }

    private void pump() {
        while (inFlight + closing < settings.concurrency() && !queue.isEmpty()) {
            TrackedWorker w = queue.poll();
            w.probe.stage = Stage.IDLE;
            if (owner.tracks(w)) {
                start(w);
            }
        }
    }

    private void start(TrackedWorker w) {
        Slot s = w.probe;
        if (s.link == null) {
            s.link = transport.open(w.endpoint());
        } else {
            // Our backoff decides when to retry; gRPC's own reconnect backoff (1 s and up) must not add to it.
            s.link.resetConnectBackoff();
        }
        ProbeTransport.Link link = s.link;
        List<java.util.function.Consumer<ProbeOutcome>> waiting = takeFresh(s);
        s.stage = Stage.IN_FLIGHT;
        inFlight++;
        sent.incrementAndGet();
        long started = context.nanoTime();
        if (settings.keepChannels() && !s.unaryOnly && s.stream == null) {
            // The probe is the worker's WatchWorkerInfo stream: its first answer is the probe's, and
            // it stays open to push every change. One call per worker: a probe and then a stream
            // cost converging on 10,000 workers a second call each, on both sides.
            s.heard = liveness.heard();
            ProbeClient.Watched watched = openStream(w, link, s.heard);
            s.stream = watched.stream();
            await(w, link, watched.first(), waiting, started, true);
        } else {
            await(w, link, link.probe(settings.timeout()), waiting, started, false);
        }
    }

    /** Hands a probe's outcome to the context; a stream that is not served there falls back to the unary call. */
    private void await(TrackedWorker w, ProbeTransport.Link link, java.util.concurrent.CompletableFuture<ProbeOutcome> probe,
                       List<java.util.function.Consumer<ProbeOutcome>> waiting, long started, boolean viaStream) {
        probe.thenAccept(outcome -> {
            if (viaStream && outcome instanceof ProbeOutcome.Failed f && f.code() == io.grpc.Status.Code.UNIMPLEMENTED) {
                context.execute(() -> unaryInstead(w, link, outcome, waiting, started));
                return;
            }
            if (!outcome.answered()) {
                failed.incrementAndGet();
            }
            if (!observers.isEmpty()) {
                long nanos = context.nanoTime() - started;
                observers.forEach(o -> o.probed(nanos, outcome.answered()));
            }
            context.execute(() -> {
                finished(w, link, outcome);
                tell(waiting, outcome);
            });
        });
    }

    /**
     * {@code w} does not serve {@code WatchWorkerInfo} (an older Rollcall, a hand-written server):
     * the same probe goes on as the unary call, over the connection just opened, and the worker is
     * watched by its connection from now on.
     */
    private void unaryInstead(TrackedWorker w, ProbeTransport.Link link, ProbeOutcome unimplemented,
                              List<java.util.function.Consumer<ProbeOutcome>> waiting, long started) {
        Slot s = w.probe;
        if (closed || !owner.tracks(w) || s.link != link) {
            finished(w, link, unimplemented);
            tell(waiting, unimplemented);
            return;
        }
        s.unaryOnly = true;
        s.stream = null;
        s.heard = null;
        await(w, link, link.probe(settings.timeout()), waiting, started, false);
    }

    /**
     * The stream a probe opens, asking for heartbeats every {@code keepalive-time}: its later
     * answers (coalesced) and its end are handed to the context; a heartbeat (the same answer
     * again) only notes in {@code heard} that the stream is alive, on the network thread.
     */
    private ProbeClient.Watched openStream(TrackedWorker w, ProbeTransport.Link link, StreamLiveness.Heard heard) {
        java.util.concurrent.atomic.AtomicReference<ProbeOutcome> latest = new java.util.concurrent.atomic.AtomicReference<>();
        return link.probeAndWatch(settings.timeout(), settings.keepaliveTime(), new ProbeClient.StreamListener() {
            @Override
            public void answer(ProbeOutcome pushed) {
                heard.now();
                if (latest.getAndSet(pushed) == null) {
                    context.execute(() -> pushed(w, link, latest));
                }
            }

            @Override
            public void repeated() {
                heard.now();
            }

            @Override
            public void ended(io.grpc.Status status) {
                context.execute(() -> streamEnded(w, link, status));
            }
        });
    }

    private void finished(TrackedWorker w, ProbeTransport.Link link, ProbeOutcome outcome) {
        inFlight--;
        Slot s = w.probe;
        boolean again = s.stage == Stage.IN_FLIGHT_AGAIN;
        s.stage = Stage.IDLE;
        if (closed) {
            return;
        }
        if (!owner.tracks(w)) {
            pump();
            return; // left while we were probing; its link is already closed
        }
        owner.probed(w, outcome);
        if (outcome.answered()) {
            if (settings.keepChannels()) {
                watch(w, link); // the stream, when the worker serves it, is already open: it was the probe
                if (s.stream != null && s.link == link) {
                    liveness.follow(w, s.stream, s.heard);
                }
            } else if (!s.shared) {
                closeLink(s);
            }
            long refresh = settings.refreshInterval().toNanos();
            schedule(w, refresh - (long) (refresh * 0.1 * jitter.nextDouble()));
        } else {
            // A failed probe's connection is never reused, kept channels or not: a connection that
            // timed out can stay wedged (accepted by the kernel but never by the server), and every
            // retry over it would time out too, long after the worker answers a new one.
            dropConnection(s);
            schedule(w, backoff.delayNanos(w.failures(), jitter));
        }
        if (again) {
            request(w);
        }
        pump();
        owner.settle();
    }

    /**
     * A change the worker pushed over its stream (draining, resumed, new labels): it arrives within
     * milliseconds, without polling. Pushes are coalesced: a burst of them while the context is busy
     * is applied once, as the newest.
     */
    private void pushed(TrackedWorker w, ProbeTransport.Link link,
                        java.util.concurrent.atomic.AtomicReference<ProbeOutcome> latest) {
        ProbeOutcome outcome = latest.getAndSet(null);
        Slot s = w.probe;
        if (outcome == null || closed || !owner.tracks(w) || s.link != link || s.stream == null) {
            return;
        }
        owner.probed(w, outcome);
        if (!outcome.answered()) { // a malformed push: as a failed probe
            dropConnection(s);
            schedule(w, backoff.delayNanos(w.failures(), jitter));
        }
        owner.settle();
    }

    private void streamEnded(TrackedWorker w, ProbeTransport.Link link, io.grpc.Status status) {
        Slot s = w.probe;
        if (closed || !owner.tracks(w) || s.link != link || s.stream == null) {
            return; // cancelled by us, or a stream of an older link
        }
        s.stream = null;
        s.heard = null;
        if (w.state() == TrackedWorker.State.ANSWERED) {
            // The status may carry the worker's own words: escaped (PeerText is idempotent).
            lost(w, "its WatchWorkerInfo stream ended: "
                    + dev.rollcall.api.PeerText.escape(ProbeClient.describe(status.asRuntimeException(), settings.timeout())));
            owner.settle();
        }
    }

    /**
     * {@code w}'s stream said nothing for longer than the heartbeat its worker granted plus
     * {@code keepalive-timeout}: its host is taken for cut off. The worker is out of use at once and
     * probed again over a new connection; the old one, wedged or not, is dropped.
     */
    private void streamSilent(TrackedWorker w, long heartbeatMillis) {
        Slot s = w.probe;
        long limitMillis = Math.max(heartbeatMillis, settings.keepaliveTime().toMillis());
        String why = "its WatchWorkerInfo stream went silent: nothing within its " + limitMillis + " ms heartbeat + "
                + settings.keepaliveTimeout().toMillis() + " ms (rollcall.probe.keepalive-timeout)";
        dropConnection(s);
        if (w.state() == TrackedWorker.State.ANSWERED) {
            lost(w, why);
        } else {
            request(w);
        }
        owner.settle();
    }

    /** A kept link that leaves READY means the worker may have restarted: probe it again. */
    private void watch(TrackedWorker w, ProbeTransport.Link link) {
        Slot s = w.probe;
        if (s.watched || s.link != link) {
            return;
        }
        if (!link.ready()) {
            lost(w, "its connection dropped"); // between the answer and now
            return;
        }
        s.watched = true;
        link.whenNotReady(() -> context.execute(() -> {
            if (s.link == link) {
                s.watched = false;
            }
            if (closed || !owner.tracks(w) || s.link != link || !w.inUse()) {
                return; // gone, closed, or already being probed again (a successful probe watches anew)
            }
            if (link.ready()) {
                watch(w, link);
            } else {
                lost(w, "its connection dropped");
                owner.settle();
            }
        }));
    }

    private void lost(TrackedWorker w, String why) {
        owner.connectionLost(w, why);
        request(w);
    }

    private void schedule(TrackedWorker w, long delayNanos) {
        Slot s = w.probe;
        cancelTimer(s);
        s.timer = context.schedule(() -> {
            s.timer = null;
            if (!closed && owner.tracks(w)) {
                request(w);
                owner.settle();
            }
        }, delayNanos);
    }

    private static void cancelTimer(Slot s) {
        if (s.timer != null) {
            s.timer.cancel();
            s.timer = null;
        }
    }

    /** A new connection for the next probe: the same channel when it was handed out, else a new link. */
    private void dropConnection(Slot s) {
        if (!s.shared) {
            closeLink(s);
            return;
        }
        if (s.stream != null) {
            ProbeClient.Watch stream = s.stream;
            s.stream = null;
            s.heard = null;
            stream.cancel();
        }
        s.link.reconnect();
    }

    private void closeLink(Slot s) {
        if (s.stream != null) {
            ProbeClient.Watch stream = s.stream;
            s.stream = null;
            s.heard = null;
            stream.cancel();
        }
        if (s.link != null) {
            // Without kept channels, every probe opens a socket and closes it: count the closing
            // ones, or the coordinator holds 2 × the limit. With kept channels it holds one per
            // worker anyway, and a churn's leavers must not hold up its newcomers' probes.
            java.util.concurrent.CompletableFuture<Void> gone = s.link.close(!settings.keepChannels());
            s.link = null;
            s.watched = false;
            if (!gone.isDone()) {
                closing++;
                gone.whenComplete((v, e) -> context.execute(() -> {
                    closing--;
                    pump();
                }));
            }
        }
    }

    /** Stops every timer and closes every link of {@code workers}; returns their channels, shut down. */
    List<ManagedChannel> close(Iterable<TrackedWorker> workers) {
        closed = true;
        liveness.close();
        List<ManagedChannel> channels = new java.util.ArrayList<>();
        for (TrackedWorker w : workers) {
            cancelTimer(w.probe);
            tell(takeFresh(w.probe), new ProbeOutcome.Failed(io.grpc.Status.Code.CANCELLED, "resolver closed"));
            if (w.probe.link != null && w.probe.link.channel() != null) {
                channels.add(w.probe.link.channel());
            }
            closeLink(w.probe);
        }
        queue.clear();
        return channels;
    }
}
