package dev.rollcall.server.internal.xds;

import dev.rollcall.protocol.internal.StreamLimit;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ADS door's transport rules, before the library sees a stream: streams in all and per
 * connection ({@link StreamLimit}), and readers that do not read. xDS answers a request at most once
 * per resource type until the client acknowledges it, so an honest client has a handful of responses
 * in flight; a client that keeps sending requests (their nonces can be guessed) while it reads none
 * would make the server queue a response for each, every one as large as the fleet. Once
 * {@value #MAX_UNREAD} responses wait behind a transport that is not ready, the next request ends
 * the stream with {@code RESOURCE_EXHAUSTED}. Thread-safe.
 */
final class AdsGuard implements ServerInterceptor {

    /** Responses an honest client can leave unread: one per resource type, and changes of subscription. */
    static final int MAX_UNREAD = 16;

    private static final Logger log = LoggerFactory.getLogger(AdsGuard.class);

    private final StreamLimit limit;
    private final Function<ServerCall<?, ?>, Object> connectionOf;
    private final LongAdder slowReadersEnded = new LongAdder();

    AdsGuard(StreamLimit limit, Function<ServerCall<?, ?>, Object> connectionOf) {
        this.limit = limit;
        this.connectionOf = connectionOf;
    }

    int streams() {
        return limit.held();
    }

    /** Streams ended so far because their client left responses unread while it kept requesting. */
    long slowReadersEnded() {
        return slowReadersEnded.sum();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                        ServerCallHandler<Q, R> next) {
        Object connection = connectionOf.apply(call);
        String refusal = limit.acquire(connection);
        if (refusal != null) {
            long since = limit.countRefusal();
            if (since > 0) {
                log.warn("refused {} ADS stream(s) since the last line: {}", since, refusal);
            }
            call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        Guarded<Q, R> guarded = new Guarded<>(call);
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(guarded, headers);
        } catch (RuntimeException e) {
            limit.release(connection);
            throw e;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            private boolean released;

            @Override
            public void onMessage(Q message) {
                if (guarded.unreadPastLimit()) {
                    slowReadersEnded.increment();
                    log.warn("ended an ADS stream from {}: {} responses wait unread while its client keeps requesting",
                            call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR), MAX_UNREAD);
                    guarded.closeSlowReader();
                    super.onCancel(); // the library lets go of the stream's watches and state
                    return;
                }
                if (!guarded.isClosedHere()) {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                if (!guarded.isClosedHere()) {
                    super.onHalfClose();
                }
            }

            @Override
            public void onReady() {
                guarded.ready();
                super.onReady();
            }

            @Override
            public void onCancel() {
                release();
                // The call is over: whatever the library closes it with next must not reach the
                // transport, where it could race the status the transport already chose (a request
                // over max-request-bytes would reach the client as CANCELLED).
                if (!guarded.cancelled()) {
                    super.onCancel();
                }
            }

            @Override
            public void onComplete() {
                release();
                if (!guarded.isClosedHere()) {
                    super.onComplete();
                }
            }

            private void release() {
                if (!released) {
                    released = true;
                    limit.release(connection);
                }
            }
        };
    }

    /** Counts the responses sent while the transport was not ready; drops what comes after a close. */
    private static final class Guarded<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        private int unread;
        private boolean closed;

        Guarded(ServerCall<Q, R> call) {
            super(call);
        }

        @Override
        public synchronized void sendMessage(R message) {
            if (closed) {
                return;
            }
            if (!delegate().isReady()) {
                unread++;
            }
            super.sendMessage(message);
        }

        @Override
        public synchronized void close(Status status, Metadata trailers) {
            if (closed) {
                return;
            }
            closed = true;
            super.close(status, trailers);
        }

        synchronized void ready() {
            if (delegate().isReady()) {
                unread = 0;
            }
        }

        synchronized boolean unreadPastLimit() {
            return !closed && unread >= MAX_UNREAD && !delegate().isReady();
        }

        /** Marks the call over; whether this guard had closed it itself before. */
        synchronized boolean cancelled() {
            boolean before = closed;
            closed = true;
            return before;
        }

        synchronized boolean isClosedHere() {
            return closed;
        }

        synchronized void closeSlowReader() {
            close(Status.RESOURCE_EXHAUSTED.withDescription(unread + " responses wait unread on this ADS stream;"
                    + " a client sends its next request after reading the last response"), new Metadata());
        }
    }
}
