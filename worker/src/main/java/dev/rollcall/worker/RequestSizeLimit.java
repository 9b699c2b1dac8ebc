package dev.rollcall.worker;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;

/**
 * Bounds each request message of Rollcall's own calls ({@code rollcall.v1.*}: WorkerInfo,
 * WatchWorkerInfo) and of gRPC server reflection, while Arrow Flight and the user's services keep
 * the server's own (large) limit. gRPC has one inbound limit per server; this counts a message's
 * bytes as the transport reads them, so an oversized one is refused after {@code max} bytes, never
 * buffered whole: {@code RESOURCE_EXHAUSTED} with a message that names the limit and its key, the
 * same way gRPC refuses a message over its own limit. A compressed message is bounded twice: its
 * bytes on the wire, and what it inflates to while it is parsed (refused then as gRPC refuses an
 * inflated message over its own limit: the call fails {@code UNKNOWN}).
 *
 * <p>Tracers run on the transport's threads, one message at a time per call. Install
 * {@link #quietOnceCancelled()} too: a streaming handler (reflection) answers the cancel that
 * follows a refusal by closing the call itself ({@code CANCELLED: client cancelled}), which
 * otherwise races the refusal's status to the client.
 */
final class RequestSizeLimit extends ServerStreamTracer.Factory {

    static final String KEY = "rollcall.worker.max-request-bytes";
    private static final ServerStreamTracer UNBOUNDED = new ServerStreamTracer() {
    };

    private final int max;

    RequestSizeLimit(int max) {
        this.max = max;
    }

    static boolean bounds(String fullMethodName) {
        return fullMethodName.startsWith("rollcall.v1.") || fullMethodName.startsWith("grpc.reflection.");
    }

    @Override
    public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
        if (!bounds(fullMethodName)) {
            return UNBOUNDED;
        }
        return new ServerStreamTracer() {
            private long wire;
            private long inflated;

            @Override
            public void inboundMessage(int seqNo) {
                wire = 0;
                inflated = 0;
            }

            @Override
            public void inboundWireSize(long bytes) {
                wire += bytes;
                check(wire);
            }

            @Override
            public void inboundUncompressedSize(long bytes) {
                inflated += bytes;
                check(inflated);
            }

            private void check(long size) {
                if (size > max) {
                    throw Status.RESOURCE_EXHAUSTED.withDescription("a " + fullMethodName + " request is larger than "
                            + max + " bytes, the limit for Rollcall's own calls (" + KEY + "=" + max + ")")
                            .asRuntimeException();
                }
            }
        };
    }

    /**
     * Drops a handler's close of a bounded call that the transport already cancelled: the client
     * has had (or is being sent) the status of the cancel, and a second one could overtake it.
     */
    static ServerInterceptor quietOnceCancelled() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                              ServerCallHandler<Q, R> next) {
                if (!bounds(call.getMethodDescriptor().getFullMethodName())) {
                    return next.startCall(call, headers);
                }
                return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        if (!isCancelled()) {
                            super.close(status, trailers);
                        }
                    }
                }, headers);
            }
        };
    }
}
