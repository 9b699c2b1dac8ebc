package dev.rollcall.protocol.internal;

import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.util.function.Predicate;

/**
 * Bounds each request message of the calls it is told to ({@code bounds}) as the transport reads
 * it, so that an oversized one is refused after {@code max} bytes, never buffered whole:
 * {@code RESOURCE_EXHAUSTED} with a message that names the method, the limit and the key that sets
 * it. gRPC has one inbound limit per server and its refusal names neither; the worker bounds
 * Rollcall's own calls beside Arrow Flight's larger limit, the fleet server every call. A
 * compressed message is bounded twice: its bytes on the wire, and what it inflates to while it is
 * parsed. Tracers run on the transport's threads, one message at a time per call; the factory is
 * immutable.
 */
public final class RequestBytesLimit extends ServerStreamTracer.Factory {

    private static final ServerStreamTracer UNBOUNDED = new ServerStreamTracer() {
    };

    private final int max;
    private final String key;
    private final String limitFor;
    private final Predicate<String> bounds;

    /**
     * @param max      the largest request message, in bytes
     * @param key      the configuration key that sets {@code max}, named in every refusal
     * @param limitFor what the limit is, for the refusal's text, e.g. {@code "the limit for Rollcall's
     *                 own calls"}; {@code ""} for none
     * @param bounds   which full method names are bounded; the others are left to gRPC's own limit
     */
    public RequestBytesLimit(int max, String key, String limitFor, Predicate<String> bounds) {
        this.max = max;
        this.key = key;
        this.limitFor = limitFor;
        this.bounds = bounds;
    }

    @Override
    public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
        if (!bounds.test(fullMethodName)) {
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
                            + max + " bytes" + (limitFor.isEmpty() ? "" : ", " + limitFor) + " (" + key + "=" + max
                            + ")").asRuntimeException();
                }
            }
        };
    }
}
