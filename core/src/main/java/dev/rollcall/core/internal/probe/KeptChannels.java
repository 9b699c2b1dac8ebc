package dev.rollcall.core.internal.probe;

import dev.rollcall.api.PeerText;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kept channels of {@link ProbeScheduler}: which workers hold one ({@code probe.keep-channels},
 * at most {@code probe.max-kept-channels} at once), and what is done over them: the
 * {@code WatchWorkerInfo} stream a kept worker's first probe opens, the pushes and the end of it,
 * its silence ({@link StreamLiveness}), and the connection watch that notices a restart in place.
 *
 * <p>A worker is given a place when a probe of it starts and a place is free, and holds it until it
 * is forgotten (left discovery, the resolver closed), failures included: a worker past the cap is
 * promoted on its next probe (a refresh at the latest) once a kept worker left. Workers past the cap
 * are probed as without kept channels: a connection per probe, closed after the answer.
 *
 * <p>With subsets ({@link #selective()}) only the workers the subset ranks eligible take a place; one
 * that stops being eligible gives its place up at once ({@link ProbeScheduler#keepOnly}).
 *
 * <p>Confined to the resolver's serial context, except {@link #keptNow()} and {@link #overCapNow()},
 * which any thread may read.
 */
final class KeptChannels<W extends ProbeTarget> {

    private static final Logger log = LoggerFactory.getLogger(KeptChannels.class);

    /** What the stream and connection watches ask of the scheduler, on the serial context. */
    interface Probing<W> {
        /** Whether the scheduler is closed. */
        boolean closed();

        /** {@code w}'s kept connection or stream was lost: the owner is told and a new probe requested. */
        void lost(W w, String why);

        /** {@code w} is probed as soon as the concurrency limit allows. */
        void request(W w);

        /** A new connection for {@code s}'s next probe (the link closed, or the shared channel reconnected). */
        void dropConnection(ProbeSlot s);

        /** A malformed push: as a failed probe (the connection dropped, a retry after the backoff). */
        void failedPush(W w);
    }

    private final SerialContext context;
    private final ProbeSettings settings;
    private final ProbeScheduler.Owner<W> owner;
    private final Probing<W> probing;
    private final StreamLiveness<W> liveness;
    private final boolean keep;
    private final int cap;
    /** With subsets: only workers marked {@link ProbeSlot#eligible} take a place. */
    private boolean selective;
    private int kept;
    private int overCap;
    private boolean capReached;
    private volatile int keptNow;
    private volatile int overCapNow;

    KeptChannels(SerialContext context, ProbeSettings settings, ProbeScheduler.Owner<W> owner, Probing<W> probing) {
        this.context = context;
        this.settings = settings;
        this.owner = owner;
        this.probing = probing;
        this.keep = settings.keepChannels();
        this.cap = settings.maxKeptChannels();
        this.liveness = new StreamLiveness<>(context, settings, new StreamLiveness.Streams<>() {
            @Override
            public boolean current(W w, ProbeClient.Watch stream) {
                return !probing.closed() && owner.tracks(w) && w.probeSlot().stream == stream;
            }

            @Override
            public void silent(W w, ProbeClient.Watch stream, long heartbeatMillis) {
                streamSilent(w, heartbeatMillis);
            }
        });
    }

    /**
     * Whether {@code w}, whose probe starts now, keeps its channel after it: it holds a place, or
     * one is free and it takes it. Past the cap it is counted, and the first time is logged once.
     */
    boolean keeps(W w) {
        ProbeSlot s = w.probeSlot();
        if (!keep || s.kept) {
            return s.kept;
        }
        if (selective && !s.eligible) {
            return false; // outside the subset and below its rank: not past any cap
        }
        if (kept < cap) {
            s.kept = true;
            kept++;
            if (s.overCap) {
                s.overCap = false;
                overCap--;
            }
            counted();
            return true;
        }
        if (!s.overCap) {
            s.overCap = true;
            overCap++;
            counted();
            if (!capReached) {
                capReached = true;
                log.warn("{} workers hold kept probe channels, the most {}={} allows; {} and the workers probed"
                        + " after it are tracked without one: a connection per probe, a restart in place noticed"
                        + " by its instance id at the next probe (or at once from discovery's), not by the"
                        + " connection (the snapshot's counts say how many: overKeptCap)", kept,
                        ProbeSettings.MAX_KEPT_CHANNELS_KEY, cap, w.endpoint().url());
            }
        }
        return false;
    }

    /** From now on only eligible workers take a place ({@link ProbeScheduler#keepOnly}). */
    void selective() {
        selective = true;
    }

    /** {@code w} is forgotten: its place, if it held one, is free for the next worker probed. */
    void release(W w) {
        ProbeSlot s = w.probeSlot();
        if (s.kept) {
            s.kept = false;
            kept--;
        }
        if (s.overCap) {
            s.overCap = false;
            overCap--;
        }
        counted();
    }

    private void counted() {
        keptNow = kept;
        overCapNow = overCap;
    }

    /** Workers holding a kept channel now. Any thread. */
    int keptNow() {
        return keptNow;
    }

    /** Workers tracked without a kept channel because the cap was reached. Any thread. */
    int overCapNow() {
        return overCapNow;
    }

    /**
     * Opens {@code w}'s stream over {@code link} as its probe, asking for heartbeats every
     * {@code keepalive-time}: its later answers (coalesced) and its end are handed to the context; a
     * heartbeat (the same answer again) only notes in {@code s.heard} that the stream is alive.
     */
    ProbeClient.Watched openStream(W w, ProbeTransport.Link link) {
        ProbeSlot s = w.probeSlot();
        StreamLiveness.Heard heard = liveness.heard();
        s.heard = heard;
        AtomicReference<ProbeOutcome> latest = new AtomicReference<>();
        ProbeClient.Watched watched = link.probeAndWatch(w.endpoint(), settings.timeout(), settings.keepaliveTime(),
                new ProbeClient.StreamListener() {
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
                    public void ended(Status status) {
                        context.execute(() -> streamEnded(w, link, status));
                    }
                });
        s.stream = watched.stream();
        return watched;
    }

    /** {@code w} answered over its kept {@code link}: the connection is watched, its stream followed. */
    void answered(W w, ProbeTransport.Link link) {
        ProbeSlot s = w.probeSlot();
        watch(w, link); // the stream, when the worker serves it, is already open: it was the probe
        if (s.stream != null && s.link == link) {
            liveness.follow(w, s.stream, s.heard);
        }
    }

    void close() {
        liveness.close();
    }

    /**
     * A change the worker pushed over its stream (draining, resumed, new labels): it arrives within
     * milliseconds, without polling. Pushes are coalesced: a burst of them while the context is busy
     * is applied once, as the newest.
     */
    private void pushed(W w, ProbeTransport.Link link, AtomicReference<ProbeOutcome> latest) {
        ProbeOutcome outcome = latest.getAndSet(null);
        ProbeSlot s = w.probeSlot();
        if (outcome == null || probing.closed() || !owner.tracks(w) || s.link != link || s.stream == null) {
            return;
        }
        owner.probed(w, outcome);
        if (!outcome.answered()) { // a malformed push: as a failed probe
            probing.failedPush(w);
        }
        owner.settle();
    }

    private void streamEnded(W w, ProbeTransport.Link link, Status status) {
        ProbeSlot s = w.probeSlot();
        if (probing.closed() || !owner.tracks(w) || s.link != link || s.stream == null) {
            return; // cancelled by us, or a stream of an older link
        }
        s.stream = null;
        s.heard = null;
        if (w.answered()) {
            // The status may carry the worker's own words: escaped (PeerText is idempotent).
            probing.lost(w, "its WatchWorkerInfo stream ended: "
                    + PeerText.escape(ProbeFailures.describe(status.asRuntimeException(), settings.timeout())));
            owner.settle();
        }
    }

    /**
     * {@code w}'s stream said nothing for longer than the heartbeat its worker granted plus
     * {@code keepalive-timeout}: its host is taken for cut off. The worker is out of use at once and
     * probed again over a new connection; the old one, wedged or not, is dropped.
     */
    private void streamSilent(W w, long heartbeatMillis) {
        ProbeSlot s = w.probeSlot();
        long limitMillis = Math.max(heartbeatMillis, settings.keepaliveTime().toMillis());
        String why = "its WatchWorkerInfo stream went silent: nothing within its " + limitMillis + " ms heartbeat + "
                + settings.keepaliveTimeout().toMillis() + " ms (rollcall.probe.keepalive-timeout)";
        probing.dropConnection(s);
        if (w.answered()) {
            probing.lost(w, why);
        } else {
            probing.request(w);
        }
        owner.settle();
    }

    /** A kept link that leaves READY means the worker may have restarted: probe it again. */
    private void watch(W w, ProbeTransport.Link link) {
        ProbeSlot s = w.probeSlot();
        if (s.watched || s.link != link) {
            return;
        }
        if (!link.ready()) {
            probing.lost(w, "its connection dropped"); // between the answer and now
            return;
        }
        s.watched = true;
        link.whenNotReady(() -> context.execute(() -> {
            if (s.link == link) {
                s.watched = false;
            }
            if (probing.closed() || !owner.tracks(w) || s.link != link || !w.inUse()) {
                return; // gone, closed, or already being probed again (a successful probe watches anew)
            }
            if (link.ready()) {
                watch(w, link);
            } else {
                probing.lost(w, "its connection dropped");
                owner.settle();
            }
        }));
    }
}
