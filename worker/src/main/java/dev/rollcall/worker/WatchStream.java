package dev.rollcall.worker;

import dev.rollcall.api.Ticker;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One coordinator's {@code WatchWorkerInfo} stream. Only the newest answer offered waits to be
 * sent, and it is sent when the call can take it; an answer older than (or as old as) the last one
 * sent is dropped, so that sends from different threads can never put an older answer after a
 * newer one. A heartbeat repeats the last answer sent, with its revision. Thread-safe: every send
 * happens under this object's lock, as gRPC wants a call's sends serialised.
 */
final class WatchStream {

    /**
     * How early a heartbeat may go: one is sent once the stream has been silent for its interval
     * less this, so that with a sweep at most this late the stream is never silent for longer than
     * the interval granted.
     */
    static final long SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ServerCallStreamObserver<WorkerInfoResponse> call;
    private final int heartbeatMillis;
    private final long heartbeatNanos;
    private final Ticker ticker;
    private final AtomicReference<Answer> pending = new AtomicReference<>();
    // Guarded by this.
    private Answer sent;
    private WorkerInfoResponse sentMessage;
    private boolean heartbeatOwed;
    private boolean done;
    /** Set without the lock, so that a cancel never waits behind a send in progress. */
    private volatile boolean cancelled;
    private long lastSendNanos;

    WatchStream(ServerCallStreamObserver<WorkerInfoResponse> call, int heartbeatMillis, Ticker ticker) {
        this.call = call;
        this.heartbeatMillis = heartbeatMillis;
        this.heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(heartbeatMillis);
        this.ticker = ticker;
        this.lastSendNanos = ticker.read();
    }

    /** The heartbeat this stream was granted, in milliseconds; 0: none. */
    int heartbeatMillis() {
        return heartbeatMillis;
    }

    /** Sends {@code answer} when the call is ready, unless a newer one is sent first. */
    void offer(Answer answer) {
        pending.accumulateAndGet(answer, Answer::newer);
        flush();
    }

    /** Sends what waits, as far as the call takes it now; also the call's on-ready handler. */
    synchronized void flush() {
        while (!done && !cancelled && call.isReady()) {
            Answer next = pending.getAndSet(null);
            if (next != null && sent != null && next.revision() <= sent.revision()) {
                continue; // overtaken: a newer answer (or this one) went out already
            }
            if (next != null) {
                send(next, next.forStream(heartbeatMillis));
            } else if (heartbeatOwed) {
                send(sent, sentMessage);
            } else {
                return;
            }
        }
    }

    /**
     * The heartbeat sweep's visit at {@code now}: repeats the last answer when the stream has been
     * silent for nearly its interval. Returns when it should be visited next ({@link Long#MAX_VALUE}:
     * never, no heartbeat or over).
     */
    synchronized long heartbeat(long now) {
        if (done || cancelled || heartbeatNanos == 0) {
            return Long.MAX_VALUE;
        }
        if (now - lastSendNanos >= heartbeatNanos - SLACK_NANOS) {
            heartbeatOwed = sent != null; // before the first answer went out there is nothing to repeat
            flush();
            if (now - lastSendNanos >= heartbeatNanos - SLACK_NANOS) {
                // Nothing went out. Not ready: the coordinator is not reading (or cannot); sent when it is, else one
                // interval on. Counted as sent so that the sweep does not come back at once.
                lastSendNanos = now;
            }
        }
        return lastSendNanos + heartbeatNanos - SLACK_NANOS;
    }

    /** Sends {@code last} unless something as new went out, then ends the stream. Idempotent. */
    synchronized void complete(Answer last) {
        if (done || cancelled) {
            return;
        }
        if (last != null && (sent == null || last.revision() > sent.revision())) {
            send(last, last.forStream(heartbeatMillis)); // even when not ready: one small message more
        }
        done = true;
        try {
            call.onCompleted();
        } catch (RuntimeException cancelled) {
            // the coordinator went away first
        }
    }

    /** The coordinator went away: nothing more is sent. Does not wait for a send in progress. */
    void cancelled() {
        cancelled = true;
    }

    private void send(Answer answer, WorkerInfoResponse message) {
        if (done || cancelled) {
            return;
        }
        try {
            call.onNext(message);
            sent = answer;
            sentMessage = message;
            heartbeatOwed = false;
            lastSendNanos = ticker.read();
        } catch (RuntimeException cancelled) {
            done = true;
        }
    }
}
