package dev.rollcall.server.internal.grpc;

import io.grpc.Attributes;
import io.grpc.ServerCall;
import io.grpc.ServerTransportFilter;

/**
 * Tags each connection with an object of its own when it is ready, so that per-connection limits
 * count streams by connection rather than by address (a proxy or a NAT puts many clients behind
 * one). Stateless apart from the tags it hands out.
 */
final class Connections extends ServerTransportFilter {

    private static final Attributes.Key<Object> CONNECTION = Attributes.Key.create("rollcall-serve-connection");
    /** The key of calls whose transport was not tagged (none over Netty; kept for safety). */
    private static final Object UNTAGGED = new Object();

    @Override
    public Attributes transportReady(Attributes transportAttrs) {
        return transportAttrs.toBuilder().set(CONNECTION, new Object()).build();
    }

    /** The connection {@code call} came over. */
    static Object of(ServerCall<?, ?> call) {
        Object tag = call.getAttributes().get(CONNECTION);
        return tag != null ? tag : UNTAGGED;
    }
}
