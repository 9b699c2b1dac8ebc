package dev.rollcall.core.internal.probe;

import dev.rollcall.api.Ticker;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices {@code WatchWorkerInfo} streams that went silent: a worker that granted heartbeats repeats
 * its answer at least every granted interval, so a stream that says nothing for that long plus
 * {@code keepalive-timeout} has lost its worker's host (no FIN, no RST: TCP itself would take
 * minutes to tell).
 *
 * <p>Cheap on a large fleet: a message on a stream costs one volatile write of a ticker reading
 * ({@link Heard#now}) on the network thread that got it, with no timer and no hop to the serial
 * context; one sweep per resolver, every {@link ProbeSettings#sweepNanos()} while any stream is
 * followed, compares those readings with the ticker. Streams whose worker granted no heartbeat
 * (workers from before heartbeats) are not followed: their silence is not absence, and HTTP/2
 * keepalive on the connection is what notices their host going away.
 *
 * <p>A stall of the coordinator itself (a GC pause, a CPU starved by its neighbours, a throttled
 * container) is not its workers' silence: the heartbeats wait unread in the socket buffers meanwhile,
 * and a sweep right after it would take every stream for gone and re-probe the whole fleet at once,
 * on a coordinator already short of CPU. The sweep notices a stall by running late, and the time a
 * sweep is late beyond a quarter of its interval is not counted against any stream heard before it.
 * A host cut off during a stall is therefore noticed up to the stall's length later.
 *
 * <p>Confined to the resolver's serial context, except {@link Heard#now}, which any thread calls.
 */
final class StreamLiveness<W> {

    private static final Logger log = LoggerFactory.getLogger(StreamLiveness.class);

    /** What the sweep asks of and tells the scheduler, on the serial context. */
    interface Streams<W> {
        /** Whether {@code stream} is still {@code w}'s open stream (entries are dropped lazily otherwise). */
        boolean current(W w, ProbeClient.Watch stream);

        /** {@code w}'s {@code stream}, whose worker repeats its answer every {@code heartbeatMillis}, said nothing past its limit. */
        void silent(W w, ProbeClient.Watch stream, long heartbeatMillis);
    }

    /** When one stream last said anything (a ticker reading); written on network threads. */
    static final class Heard {
        private final Ticker ticker;
        private final StreamLiveness<?> liveness;
        private volatile long stalledAt;
        private volatile long at;

        private Heard(Ticker ticker, StreamLiveness<?> liveness) {
            this.ticker = ticker;
            this.liveness = liveness;
            now();
        }

        /** The stream just said something. Any thread; one ticker read, a volatile read and two writes. */
        void now() {
            stalledAt = liveness.stalledNanos;
            at = ticker.read();
        }

        /** How long the stream has said nothing at {@code now}, less the coordinator's own stalls since. */
        long silence(long now) {
            long heardAt = at;
            return now - heardAt - (liveness.stalledNanos - stalledAt);
        }
    }

    private record Followed(ProbeClient.Watch stream, Heard heard) {
    }

    private final SerialContext context;
    private final Ticker ticker;
    private final ProbeSettings settings;
    private final Streams<W> streams;
    private final Map<W, Followed> followed = new HashMap<>();
    private SerialContext.Timer sweep;
    /** When the scheduled sweep is due (a ticker reading). */
    private long sweepDue;
    /**
     * The coordinator's stalls so far: the sum of the sweeps' lateness beyond a quarter of their
     * interval. Written on the serial context, read by {@link Heard} on network threads.
     */
    private volatile long stalledNanos;
    private boolean closed;

    StreamLiveness(SerialContext context, ProbeSettings settings, Streams<W> streams) {
        this.context = context;
        this.ticker = context::nanoTime;
        this.settings = settings;
        this.streams = streams;
    }

    /** A clock for a stream about to open: it counts as heard from now. */
    Heard heard() {
        return new Heard(ticker, this);
    }

    /**
     * Follows {@code w}'s {@code stream} from its first answer on, if its worker granted heartbeats;
     * replaces what was followed for {@code w} before.
     */
    void follow(W w, ProbeClient.Watch stream, Heard heard) {
        if (closed || stream.heartbeatMillis() <= 0) {
            return;
        }
        heard.now();
        followed.put(w, new Followed(stream, heard));
        if (sweep == null) {
            scheduleSweep();
        }
    }

    /** How many streams are followed now (for tests). */
    int size() {
        return followed.size();
    }

    private void sweep() {
        sweep = null;
        if (closed) {
            return;
        }
        long now = context.nanoTime();
        long late = now - sweepDue;
        if (late > settings.sweepNanos() / 4) {
            stalledNanos += late; // the coordinator itself ran late: not the streams' silence
            if (late >= TimeUnit.SECONDS.toNanos(1)) {
                log.info("the resolver's threads stalled for {} ms (a GC pause or a starved CPU); streams' silence"
                        + " meanwhile is not counted", TimeUnit.NANOSECONDS.toMillis(late));
            }
        }
        List<Map.Entry<W, Followed>> silent = null;
        for (Iterator<Map.Entry<W, Followed>> it = followed.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<W, Followed> e = it.next();
            Followed f = e.getValue();
            if (!streams.current(e.getKey(), f.stream())) {
                it.remove(); // cancelled, ended or replaced since: nothing to follow
                continue;
            }
            long granted = f.stream().heartbeatMillis();
            if (granted > 0 && f.heard().silence(now) > settings.silenceLimitNanos(granted)) {
                if (silent == null) {
                    silent = new ArrayList<>();
                }
                silent.add(Map.entry(e.getKey(), f));
                it.remove();
            }
        }
        if (silent != null) {
            for (Map.Entry<W, Followed> e : silent) {
                streams.silent(e.getKey(), e.getValue().stream(), e.getValue().stream().heartbeatMillis());
            }
        }
        if (!followed.isEmpty() && !closed) {
            scheduleSweep();
        }
    }

    private void scheduleSweep() {
        sweepDue = context.nanoTime() + settings.sweepNanos();
        sweep = context.schedule(this::sweep, settings.sweepNanos());
    }

    /** Stops the sweep and follows nothing more. */
    void close() {
        closed = true;
        followed.clear();
        if (sweep != null) {
            sweep.cancel();
            sweep = null;
        }
    }
}
