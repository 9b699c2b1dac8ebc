package dev.rollcall.core.internal.probe;

import dev.rollcall.api.Ticker;
import dev.rollcall.core.internal.ProbeClient;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Notices {@code WatchWorkerInfo} streams that went silent: a worker that granted heartbeats repeats
 * its answer at least every granted interval, so a stream that says nothing for that long plus
 * {@code keepalive-timeout} has lost its worker's host (no FIN, no RST: TCP itself would take
 * minutes to tell).
 *
 * <p>Cheap at 10,000 workers: a message on a stream costs one volatile write of a ticker reading
 * ({@link Heard#now}) on the network thread that got it, with no timer and no hop to the serial
 * context; one sweep per resolver, every {@link ProbeSettings#sweepNanos()} while any stream is
 * followed, compares those readings with the ticker. Streams whose worker granted no heartbeat
 * (workers from before heartbeats) are not followed: their silence is not absence, and HTTP/2
 * keepalive on the connection is what notices their host going away.
 *
 * <p>Confined to the resolver's serial context, except {@link Heard#now}, which any thread calls.
 */
final class StreamLiveness<W> {

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
        private volatile long at;

        private Heard(Ticker ticker) {
            this.ticker = ticker;
            this.at = ticker.read();
        }

        /** The stream just said something. Any thread; one ticker read and one volatile write. */
        void now() {
            at = ticker.read();
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
    private boolean closed;

    StreamLiveness(SerialContext context, ProbeSettings settings, Streams<W> streams) {
        this.context = context;
        this.ticker = context::nanoTime;
        this.settings = settings;
        this.streams = streams;
    }

    /** A clock for a stream about to open: it counts as heard from now. */
    Heard heard() {
        return new Heard(ticker);
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
            sweep = context.schedule(this::sweep, settings.sweepNanos());
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
        List<Map.Entry<W, Followed>> silent = null;
        for (Iterator<Map.Entry<W, Followed>> it = followed.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<W, Followed> e = it.next();
            Followed f = e.getValue();
            if (!streams.current(e.getKey(), f.stream())) {
                it.remove(); // cancelled, ended or replaced since: nothing to follow
                continue;
            }
            long granted = f.stream().heartbeatMillis();
            if (granted > 0 && now - f.heard().at > settings.silenceLimitNanos(granted)) {
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
            sweep = context.schedule(this::sweep, settings.sweepNanos());
        }
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
