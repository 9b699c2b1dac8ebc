package dev.rollcall.server.internal.grpc;

import dev.rollcall.server.ServerKeys;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;

/**
 * Bounds each request message of the fleet API ({@code rollcall.serve.max-request-bytes}) as the
 * transport reads it, so that an oversized one is refused after that many bytes, never buffered
 * whole, with {@code RESOURCE_EXHAUSTED} naming the limit and its key (gRPC's own
 * {@code maxInboundMessageSize}, set to the same bound, would name neither). A compressed message
 * is bounded on the wire and as it inflates. Tracers run on the transport's threads, one message at
 * a time per call.
 */
final class RequestSizeLimit extends ServerStreamTracer.Factory {

    private final int max;

    RequestSizeLimit(int max) {
        this.max = max;
    }

    @Override
    public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
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
                            + max + " bytes (" + ServerKeys.MAX_REQUEST_BYTES.name() + "=" + max + ")")
                            .asRuntimeException();
                }
            }
        };
    }
}
