package dev.rollcall.server.internal.xds;

import dev.rollcall.api.PeerText;
import io.envoyproxy.controlplane.cache.Resources;
import io.envoyproxy.controlplane.server.DiscoveryServerCallbacks;
import io.envoyproxy.controlplane.server.exception.RequestException;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ADS door keeps per stream, beside the library's own state machine: the last response of
 * each type (version and nonce), so that a NACK is logged once with the client's reason and is not
 * answered with the version it just rejected; and the names the stream subscribes to, bounded by
 * {@code rollcall.serve.xds.max-resources-per-stream}.
 *
 * <p>A NACK's request carries the last version the client accepted: the library's cache would take
 * it for an out-of-date client and send the rejected version straight back, and a client that
 * rejects it again would spin with the server. {@link #rejected} hands the rejected version (and the
 * names it answered) to {@link XdsCache}, which waits for the next publish instead. The library calls a request's
 * callbacks and then creates its watch on the same thread, one request of a stream at a time; the
 * hand-over is matched by the request object itself, so a request that makes no watch (a stale
 * nonce) leaves nothing behind for another. Thread-safe.
 */
final class XdsStreams implements DiscoveryServerCallbacks {

    private static final Logger log = LoggerFactory.getLogger(XdsStreams.class);
    private static final int MAX_REASON_CHARS = 1024;
    private static final int MAX_NODE_CHARS = 256;

    private final int maxResources;
    private final String maxResourcesKey;
    private final Map<Long, Stream> streams = new ConcurrentHashMap<>();
    private final ThreadLocal<Rejected> handOver = new ThreadLocal<>();
    private final LongAdder nacks = new LongAdder();

    XdsStreams(int maxResources, String maxResourcesKey) {
        this.maxResources = maxResources;
        this.maxResourcesKey = maxResourcesKey;
    }

    /** NACKs received so far. */
    long nacks() {
        return nacks.sum();
    }

    /** Streams the library has open now. */
    int open() {
        return streams.size();
    }

    @Override
    public void onStreamOpen(long streamId, String typeUrl) {
        streams.put(streamId, new Stream());
    }

    @Override
    public void onStreamClose(long streamId, String typeUrl) {
        streams.remove(streamId);
    }

    @Override
    public void onStreamCloseWithError(long streamId, String typeUrl, Throwable error) {
        streams.remove(streamId);
    }

    @Override
    public void onV3StreamRequest(long streamId, DiscoveryRequest request) throws RequestException {
        handOver.remove();
        Stream stream = streams.get(streamId);
        if (stream == null) {
            return;
        }
        String type = request.getTypeUrl();
        if (!Resources.V3.TYPE_URLS.contains(type)) {
            throw new RequestException(Status.INVALID_ARGUMENT.withDescription("this ADS server serves "
                    + String.join(", ", Resources.V3.TYPE_URLS) + "; not " + PeerText.escape(type, 200)));
        }
        // An empty list is a wildcard subscription: one subscription, however many it yields.
        int names = Math.max(1, request.getResourceNamesCount());
        int total = stream.subscribe(type, names);
        if (total > maxResources) {
            throw new RequestException(Status.RESOURCE_EXHAUSTED.withDescription("this ADS stream subscribes to "
                    + total + " resource names, more than one stream may (" + maxResourcesKey + "=" + maxResources
                    + ")"));
        }
        if (!request.hasErrorDetail()) {
            return;
        }
        Sent sent = stream.sent.get(type);
        if (sent == null || !sent.nonce.equals(request.getResponseNonce())) {
            return; // not about the last response: the library ignores it too
        }
        handOver.set(new Rejected(request, sent.version, sent.names));
        if (sent.logged) {
            return;
        }
        sent.logged = true;
        nacks.increment();
        log.warn("xDS client {} rejected {} version {} and keeps its last good one ({}): {}",
                PeerText.escape(request.getNode().getId(), MAX_NODE_CHARS), shortType(type), sent.version,
                PeerText.escape(request.getVersionInfo(), 128),
                PeerText.escape(request.getErrorDetail().getMessage(), MAX_REASON_CHARS));
    }

    @Override
    public void onV3StreamDeltaRequest(long streamId, DeltaDiscoveryRequest request) {
        // Delta xDS is not served (only the state-of-the-world ADS method is bound).
    }

    @Override
    public void onV3StreamResponse(long streamId, DiscoveryRequest request, DiscoveryResponse response) {
        Stream stream = streams.get(streamId);
        if (stream != null) {
            stream.sent.put(response.getTypeUrl(), new Sent(response.getNonce(), response.getVersionInfo(),
                    Set.copyOf(request.getResourceNamesList())));
        }
    }

    /**
     * What {@code request} rejects, when it is a NACK of the last response of its type that this
     * thread's stream just reported; else null. Reading it ends the hand-over.
     */
    Rejected rejected(DiscoveryRequest request) {
        Rejected rejected = handOver.get();
        handOver.remove();
        return rejected != null && rejected.request == request ? rejected : null;
    }

    private static String shortType(String typeUrl) {
        return PeerText.escape(typeUrl.substring(typeUrl.lastIndexOf('.') + 1), 64);
    }

    /**
     * A NACK: the request that carries it, the version it rejects, and the names the rejected
     * response answered (the client has seen them, though it acknowledged none).
     */
    record Rejected(DiscoveryRequest request, String version, Set<String> names) {
    }

    private static final class Sent {
        final String nonce;
        final String version;
        final Set<String> names;
        /** Whether a NACK of this response was logged: a client repeating it is logged once. */
        volatile boolean logged;

        Sent(String nonce, String version, Set<String> names) {
            this.nonce = nonce;
            this.version = version;
            this.names = names;
        }
    }

    private static final class Stream {
        final Map<String, Sent> sent = new ConcurrentHashMap<>();
        private final Map<String, Integer> subscribed = new ConcurrentHashMap<>();

        /** Records {@code names} subscriptions of {@code type}; the stream's total. */
        int subscribe(String type, int names) {
            subscribed.put(type, names);
            int total = 0;
            for (int n : subscribed.values()) {
                total += n;
            }
            return total;
        }
    }
}
