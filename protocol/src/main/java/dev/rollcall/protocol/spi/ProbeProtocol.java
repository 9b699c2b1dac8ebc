package dev.rollcall.protocol.spi;

import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.util.concurrent.CompletableFuture;

/**
 * How the resolver asks a candidate what it runs, and is told when that changes. Created by its
 * {@link ProbeProtocolProvider}; one instance serves every candidate of a resolver, so it is
 * thread-safe and keeps no per-candidate state outside the calls it starts.
 *
 * <p>Threading: {@link #probe} and {@link #watch} are called on one of the resolver's own threads
 * (its probe starter), many times a second while converging on a large fleet: they must not block
 * (start the call and return). Futures and listeners complete on whatever thread the protocol's I/O
 * runs on, and must be completed promptly.
 *
 * <p>Failure: an expected failure (refused, timed out, an answer that breaks a bound, a candidate
 * without the label the protocol needs) is a {@link ProbeOutcome.Failed} value, never an exception:
 * a future that completes exceptionally, or a method that throws, is a bug, which the resolver turns
 * into a failed probe ({@code INTERNAL}) naming the protocol. Answers are checked by the resolver as
 * a {@code rollcall.v1} answer is (a version of 1 to 256 characters without white space or control
 * characters); one that breaks a bound is a failed probe.
 */
public interface ProbeProtocol {

    /** What its answers carry; constant for the protocol's life. */
    ProbeCapabilities capabilities();

    /**
     * Probes {@code request}'s candidate once: the future completes with its answer, or the failure,
     * within {@code request.timeout()}, and never exceptionally.
     */
    CompletableFuture<ProbeOutcome> probe(ProbeRequest request);

    /**
     * Watches the candidate: answers go to {@code listener} as they come, the first one as the
     * probe's (the resolver keeps {@code request.timeout()} for it and cancels the watch when
     * nothing came), later ones whenever something changed, until the watch ends
     * ({@link WatchListener#ended}) or the resolver cancels it. Called only when
     * {@link ProbeCapabilities#push()} says so; a candidate that does not serve the watch ends it
     * with {@link Status.Code#UNIMPLEMENTED} before any answer, and the resolver then polls it with
     * {@link #probe}.
     *
     * @return the handle that cancels the watch; any thread, idempotent
     */
    default Watch watch(ProbeRequest request, WatchListener listener) {
        throw new UnsupportedOperationException(getClass().getName() + " does not push (ProbeCapabilities.push)");
    }

    /** An open watch. */
    interface Watch {
        /** Ends the watch; no call to its listener follows once it returns (but one racing it may). Idempotent. */
        void cancel();
    }

    /** What a watch tells the resolver; every method must be fast and must not block. */
    interface WatchListener {
        /** An answer (the first, or a change), or a {@code Failed} for one that breaks a bound (then end the watch). */
        void answer(ProbeOutcome outcome);

        /** The watch ended on its own with {@code status} (once; not after {@link Watch#cancel()}). */
        void ended(Status status);
    }
}
