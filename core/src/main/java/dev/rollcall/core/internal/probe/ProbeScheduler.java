package dev.rollcall.core.internal.probe;

import dev.rollcall.api.Backoff;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.protocol.ProbeOutcome.Failed;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import io.grpc.Status.Code;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * When and how workers are probed: a queue with a concurrency limit, at most one probe in flight
 * per worker, retries with backoff after failures, refreshes after answers. Kept connections (up to
 * {@code probe.max-kept-channels} of them), their streams and the watches that notice a restart in
 * place or a host gone silent are {@link KeptChannels}'; a worker without one is probed over a
 * connection of its own each time. What an outcome means for the worker is the {@link Owner}'s business.
 *
 * <p>Confined to the resolver's serial context; probe callbacks hop back to it. Counters and
 * observers may be read and added from any thread.
 */
public final class ProbeScheduler<W extends ProbeTarget> {

    /** Told of outcomes and lost connections, on the serial context. */
    public interface Owner<W> {
        /** Whether {@code worker} is still a candidate (it may have left while being probed). */
        boolean tracks(W worker);

        /** A probe of {@code worker} finished; apply it before the scheduler plans the next one. */
        void probed(W worker, ProbeOutcome outcome);

        /**
         * {@code worker}'s kept connection dropped or its stream went silent ({@code why} says which,
         * e.g. "its connection dropped"); a probe over a new connection is requested next.
         */
        void connectionLost(W worker, String why);

        /** A probe finished or a timer fired: the time to publish what changed. */
        void settle();
    }

    /** Told of every finished probe, on the network thread that finished it: must be fast and thread-safe. */
    public interface Observer {
        void probed(long latencyNanos, boolean answered);
    }

    private final SerialContext context;
    private final ProbeTransport transport;
    private final ProbeSettings settings;
    private final Backoff backoff;
    private final RandomGenerator jitter;
    private final Owner<W> owner;
    private final ArrayDeque<W> queue = new ArrayDeque<>();
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
    /** Who holds a kept channel, and the streams and connection watches over them. */
    private final KeptChannels<W> keptChannels;

    public ProbeScheduler(SerialContext context, ProbeTransport transport, ProbeSettings settings, RandomGenerator jitter,
                   Owner<W> owner) {
        this.context = context;
        this.transport = transport;
        this.settings = settings;
        this.backoff = Backoff.of(settings.backoffInitial(), settings.backoffMax());
        this.jitter = jitter;
        this.owner = owner;
        this.keptChannels = new KeptChannels<>(context, settings, owner, new KeptChannels.Probing<>() {
            @Override
            public boolean closed() {
                return closed;
            }

            @Override
            public void lost(W w, String why) {
                ProbeScheduler.this.lost(w, why);
            }

            @Override
            public void request(W w) {
                ProbeScheduler.this.request(w);
            }

            @Override
            public void dropConnection(ProbeSlot s) {
                ProbeScheduler.this.dropConnection(s);
            }

            @Override
            public void failedPush(W w) {
                dropConnection(w.probeSlot());
                schedule(w, backoff.delayNanos(w.failures(), jitter));
            }
        });
    }

    /** Probes {@code w} as soon as the concurrency limit allows; once more if a probe is in flight. */
    public void request(W w) {
        ProbeSlot s = w.probeSlot();
        switch (s.stage) {
            case IN_FLIGHT -> s.stage = ProbeSlot.Stage.IN_FLIGHT_AGAIN;
            case IDLE -> {
                s.cancelTimer();
                s.stage = ProbeSlot.Stage.QUEUED;
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
    public void requestFresh(W w, Consumer<ProbeOutcome> then) {
        w.probeSlot().awaitFresh(then);
        request(w);
    }

    /** Whether probes are in flight or waiting: answers keep coming. */
    public boolean busy() {
        return inFlight > 0 || !queue.isEmpty();
    }

    /** Whether a probe of {@code w} is in flight now, or a caller waits for one ({@link #requestFresh}). */
    public boolean busyWith(W w) {
        return w.probeSlot().busy();
    }

    /**
     * Discovery relabelled {@code w}: with a protocol whose answers carry discovery's labels (the
     * version among them) it is probed again, its stream (which answers with the old labels)
     * replaced by a new one; with {@code rollcall} nothing happens here.
     */
    public void relabelled(W w) {
        if (!transport.followsLabels()) {
            return;
        }
        ProbeSlot s = w.probeSlot();
        if (s.stream != null && s.stage != ProbeSlot.Stage.IN_FLIGHT && s.stage != ProbeSlot.Stage.IN_FLIGHT_AGAIN) {
            s.stream.cancel();
            s.stream = null;
            s.heard = null;
        }
        request(w);
    }

    /** {@code w} left: no more probes or timers, and its connection is closed. */
    public void forget(W w) {
        ProbeSlot s = w.probeSlot();
        s.cancelTimer();
        closeLink(s);
        keptChannels.release(w);
        ProbeSlot.tell(s.takeFresh(), new Failed(Code.CANCELLED, "left discovery"));
    }

    /**
     * {@code w}'s channel for the user's own calls: the one it is probed over, opened now if it has
     * none, and from now on kept until the worker leaves or the resolver closes (a failed probe drops
     * the connection, not the channel).
     */
    public ManagedChannel share(W w) {
        ProbeSlot s = w.probeSlot();
        if (s.link == null) {
            s.link = transport.open(w.endpoint());
        }
        s.shared = true;
        return s.link.channel();
    }

    /** {@code w}'s open channel, if it has one (for schema fetches over the same connection). */
    public ManagedChannel channel(W w) {
        ProbeTransport.Link link = w.probeSlot().link;
        return link == null ? null : link.channel();
    }

    public long sent() {
        return sent.get();
    }

    public long failed() {
        return failed.get();
    }

    /**
     * Whether {@code w} holds a kept channel (its stream, when it serves one, carries the holder id of
     * exact drain); false past {@code probe.max-kept-channels} and with {@code keep-channels=false}.
     */
    public boolean kept(W w) {
        return w.probeSlot().kept;
    }

    /** With subsets: from now on only workers {@link #keepOnly} marks eligible keep a channel. */
    public void keepOnlyEligible() {
        keptChannels.selective();
    }

    /**
     * Marks which of {@code workers} may keep a channel: a kept one that may not any more is demoted
     * (its stream and connection closed at once, or when its probe in flight ends; a channel handed
     * to the user stays, without its stream); one that may and holds none is promoted (probed soon,
     * and that probe keeps its channel), unless it is past the kept-channel cap. O(M).
     */
    public void keepOnly(Iterable<? extends W> workers, Predicate<? super W> eligible) {
        for (W w : workers) {
            ProbeSlot s = w.probeSlot();
            s.eligible = eligible.test(w);
            if (s.kept && !s.eligible) {
                keptChannels.release(w);
                if (s.stage != ProbeSlot.Stage.IN_FLIGHT && s.stage != ProbeSlot.Stage.IN_FLIGHT_AGAIN) {
                    if (s.shared) {
                        s.cancelStream();
                    } else {
                        closeLink(s);
                    }
                } // else finished() closes it: the worker keeps no link any more
            } else if (s.eligible && !s.kept && !s.overCap && settings.keepChannels() && transport.sends()
                    && s.stage == ProbeSlot.Stage.IDLE && w.answered()) {
                request(w); // promoted: its next probe takes a place (a pending one is probed anyway)
            }
        }
    }

    /** Workers holding a kept channel now. Any thread. */
    public int keptChannels() {
        return keptChannels.keptNow();
    }

    /** Workers tracked without a kept channel because {@code probe.max-kept-channels} was reached. Any thread. */
    public int overKeptCap() {
        return keptChannels.overCapNow();
    }

    /** Adds {@code observer}; the returned action removes it again (idempotent). */
    public Runnable addObserver(Observer observer) {
        observers.add(observer);
        return () -> observers.remove(observer);
    }

    private void pump() {
        while (inFlight + closing < settings.concurrency() && !queue.isEmpty()) {
            W w = queue.poll();
            w.probeSlot().stage = ProbeSlot.Stage.IDLE;
            if (owner.tracks(w)) {
                start(w);
            }
        }
    }

    private void start(W w) {
        ProbeSlot s = w.probeSlot();
        if (s.link == null) {
            s.link = transport.open(w.endpoint());
        } else {
            // Our backoff decides when to retry; gRPC's own reconnect backoff (1 s and up) must not add to it.
            s.link.resetConnectBackoff();
        }
        ProbeTransport.Link link = s.link;
        List<Consumer<ProbeOutcome>> waiting = s.takeFresh();
        s.stage = ProbeSlot.Stage.IN_FLIGHT;
        inFlight++;
        if (transport.sends()) {
            sent.incrementAndGet();
        }
        long started = context.nanoTime();
        if (keeps(w) && transport.pushes() && !s.unaryOnly && s.stream == null) {
            // The probe is the worker's WatchWorkerInfo stream: its first answer is the probe's, and
            // it stays open to push every change. One call per worker: a probe and then a stream
            // would be a second call for every worker, on both sides.
            await(w, link, keptChannels.openStream(w, link).first(), waiting, started, true);
        } else {
            await(w, link, link.probe(w.endpoint(), settings.timeout()), waiting, started, false);
        }
    }

    /** Hands a probe's outcome to the context; a stream that is not served there falls back to the unary call. */
    private void await(W w, ProbeTransport.Link link, CompletableFuture<ProbeOutcome> probe,
                       List<Consumer<ProbeOutcome>> waiting, long started, boolean viaStream) {
        probe.thenAccept(outcome -> {
            if (viaStream && outcome instanceof Failed f && f.code() == Code.UNIMPLEMENTED) {
                context.execute(() -> unaryInstead(w, link, outcome, waiting, started));
                return;
            }
            if (!outcome.answered()) {
                failed.incrementAndGet();
            }
            if (!observers.isEmpty() && transport.sends()) {
                long nanos = context.nanoTime() - started;
                observers.forEach(o -> o.probed(nanos, outcome.answered()));
            }
            context.execute(() -> {
                finished(w, link, outcome);
                ProbeSlot.tell(waiting, outcome);
            });
        });
    }

    /**
     * {@code w} does not serve {@code WatchWorkerInfo} (an older Rollcall, a hand-written server):
     * the same probe goes on as the unary call, over the connection just opened, and the worker is
     * watched by its connection from now on.
     */
    private void unaryInstead(W w, ProbeTransport.Link link, ProbeOutcome unimplemented,
                              List<Consumer<ProbeOutcome>> waiting, long started) {
        ProbeSlot s = w.probeSlot();
        if (closed || !owner.tracks(w) || s.link != link) {
            finished(w, link, unimplemented);
            ProbeSlot.tell(waiting, unimplemented);
            return;
        }
        s.unaryOnly = true;
        s.stream = null;
        s.heard = null;
        await(w, link, link.probe(w.endpoint(), settings.timeout()), waiting, started, false);
    }

    private void finished(W w, ProbeTransport.Link link, ProbeOutcome outcome) {
        inFlight--;
        ProbeSlot s = w.probeSlot();
        boolean again = s.stage == ProbeSlot.Stage.IN_FLIGHT_AGAIN;
        s.stage = ProbeSlot.Stage.IDLE;
        if (closed) {
            return;
        }
        if (!owner.tracks(w)) {
            pump();
            return; // left while we were probing; its link is already closed
        }
        owner.probed(w, outcome);
        if (outcome.answered()) {
            if (keepsLink(s)) {
                keptChannels.answered(w, link);
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

    private void lost(W w, String why) {
        owner.connectionLost(w, why);
        request(w);
    }

    private void schedule(W w, long delayNanos) {
        ProbeSlot s = w.probeSlot();
        s.cancelTimer();
        s.timer = context.schedule(() -> {
            s.timer = null;
            if (!closed && owner.tracks(w)) {
                request(w);
                owner.settle();
            }
        }, delayNanos);
    }

    /**
     * Whether {@code w} keeps its link after the probe starting now. A protocol that sends nothing
     * ({@code none}) opens no connection: its links cost no descriptor and are not capped.
     */
    private boolean keeps(W w) {
        return transport.sends() ? keptChannels.keeps(w) : settings.keepChannels();
    }

    /** Whether {@code s}'s link is kept between probes (see {@link #keeps}). */
    private boolean keepsLink(ProbeSlot s) {
        return s.kept || !transport.sends() && settings.keepChannels();
    }

    /** A new connection for the next probe: the same channel when it was handed out, else a new link. */
    private void dropConnection(ProbeSlot s) {
        if (!s.reconnectShared()) {
            closeLink(s);
        }
    }

    private void closeLink(ProbeSlot s) {
        // Without a kept channel, every probe opens a socket and closes it: count the closing
        // ones, or the coordinator holds 2 × the limit. A kept worker holds one anyway, and a
        // churn's leavers must not hold up its newcomers' probes.
        CompletableFuture<Void> gone = s.closeLink(!keepsLink(s));
        if (gone != null && !gone.isDone()) {
            closing++;
            gone.whenComplete((v, e) -> context.execute(() -> {
                closing--;
                pump();
            }));
        }
    }

    /** Stops every timer and closes every link of {@code workers}; returns their channels, shut down. */
    public List<ManagedChannel> close(Iterable<? extends W> workers) {
        closed = true;
        keptChannels.close();
        List<ManagedChannel> channels = new ArrayList<>();
        for (W w : workers) {
            ProbeSlot s = w.probeSlot();
            s.cancelTimer();
            ProbeSlot.tell(s.takeFresh(), new Failed(Code.CANCELLED, "resolver closed"));
            if (s.link != null && s.link.channel() != null) {
                channels.add(s.link.channel());
            }
            closeLink(s);
            keptChannels.release(w);
        }
        queue.clear();
        return channels;
    }
}
