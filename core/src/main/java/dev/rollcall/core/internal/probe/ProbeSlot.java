package dev.rollcall.core.internal.probe;

import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.protocol.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The probe scheduler's part of one worker's state: where it is in the queue, its next timer, its
 * kept link and the stream on it. A worker holds one ({@link ProbeTarget#probeSlot()}); only the
 * probe code reads or writes what is in it.
 *
 * <p>Confined to the resolver's serial context.
 */
public final class ProbeSlot {

    /** Where a worker is in the probe queue. */
    enum Stage {
        IDLE, QUEUED, IN_FLIGHT,
        /** In flight, and asked for again meanwhile: probe once more when it finishes. */
        IN_FLIGHT_AGAIN
    }

    Stage stage = Stage.IDLE;
    SerialContext.Timer timer;          // the next retry or refresh
    ProbeTransport.Link link;           // kept between probes when the worker holds a kept channel
    boolean kept;                       // holds one of max-kept-channels' places (KeptChannels)
    boolean overCap;                    // tracked without a kept channel because the cap was reached
    boolean eligible;                   // with subsets: may hold a kept channel (ProbeScheduler#keepOnly)
    boolean watched;                    // a connection watch is registered on link
    ProbeClient.Watch stream;           // the worker's WatchWorkerInfo stream (also while its probe is in flight)
    StreamLiveness.Heard heard;         // when stream last said anything; set with stream
    boolean unaryOnly;                  // the worker answered WatchWorkerInfo UNIMPLEMENTED
    boolean shared;                     // link's channel was handed to the user: never replaced
    /** Told of the next probe that starts from now on; null when none waits. */
    private List<Consumer<ProbeOutcome>> fresh;

    /** Whether a probe is in flight now, or a caller waits for one. */
    boolean busy() {
        return stage == Stage.IN_FLIGHT || stage == Stage.IN_FLIGHT_AGAIN || fresh != null;
    }

    /** {@code then} waits for the next probe that starts. */
    void awaitFresh(Consumer<ProbeOutcome> then) {
        if (fresh == null) {
            fresh = new ArrayList<>(2);
        }
        fresh.add(then);
    }

    /** Who waits for the next probe that starts (null when none); they wait no more. */
    List<Consumer<ProbeOutcome>> takeFresh() {
        List<Consumer<ProbeOutcome>> waiting = fresh;
        fresh = null;
        return waiting;
    }

    /** Tells {@code waiting} (from {@link #takeFresh}, may be null) of {@code outcome}. */
    static void tell(List<Consumer<ProbeOutcome>> waiting, ProbeOutcome outcome) {
        if (waiting != null) {
            waiting.forEach(then -> then.accept(outcome));
        }
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    /** Cancels the stream, if one is open. */
    void cancelStream() {
        if (stream != null) {
            ProbeClient.Watch open = stream;
            stream = null;
            heard = null;
            open.cancel();
        }
    }

    /**
     * A new connection for the next probe: the same channel when it was handed out (returns true),
     * else nothing is done and the caller closes the link (returns false).
     */
    boolean reconnectShared() {
        if (!shared) {
            return false;
        }
        cancelStream();
        link.reconnect();
        return true;
    }

    /**
     * Closes the stream and the link; returns the link's {@link ProbeTransport.Link#close} future
     * (null when there was no link).
     */
    CompletableFuture<Void> closeLink(boolean untilGone) {
        cancelStream();
        if (link == null) {
            return null;
        }
        CompletableFuture<Void> gone = link.close(untilGone);
        link = null;
        watched = false;
        return gone;
    }
}
