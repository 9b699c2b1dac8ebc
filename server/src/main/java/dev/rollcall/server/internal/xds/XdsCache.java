package dev.rollcall.server.internal.xds;

import io.envoyproxy.controlplane.cache.ConfigWatcher;
import io.envoyproxy.controlplane.cache.DeltaResponse;
import io.envoyproxy.controlplane.cache.DeltaWatch;
import io.envoyproxy.controlplane.cache.DeltaXdsRequest;
import io.envoyproxy.controlplane.cache.Response;
import io.envoyproxy.controlplane.cache.Watch;
import io.envoyproxy.controlplane.cache.XdsRequest;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The library's {@link SimpleCache} with one snapshot for every client, and two departures from it
 * that xDS clients of one fleet need:
 * <ul>
 *   <li>Requests are answered with the resources the fleet has among those asked for, as the
 *       state-of-the-world protocol answers them: the cache's ADS mode would not answer a request
 *       that names a resource it lacks at all, so one channel dialling an unknown name would stall
 *       every channel sharing the client's stream. (That rule lets Envoy warm resources a control
 *       plane names in several snapshots; this fleet's names are fixed for the server's life and its
 *       Cluster and endpoints come in one snapshot.)</li>
 *   <li>A NACK waits for the next publish ({@link XdsStreams#rejected}) instead of getting
 *       the rejected version back at once, whether the client had acknowledged an earlier version or
 *       none.</li>
 * </ul>
 * Thread-safe, as the cache is.
 */
final class XdsCache implements ConfigWatcher {

    /** Every node is in one group: what a client sees depends on the names it asks for only. */
    static final String GROUP = "fleet";

    private final SimpleCache<String> cache = new SimpleCache<>(node -> GROUP);
    private final XdsStreams streams;

    XdsCache(XdsStreams streams) {
        this.streams = streams;
    }

    /** Answers every open watch whose version {@code snapshot} changes. */
    void publish(Snapshot snapshot) {
        cache.setSnapshot(GROUP, snapshot);
    }

    /** The snapshot published last; null before the first. */
    Snapshot current() {
        return cache.getSnapshot(GROUP);
    }

    @Override
    public Watch createWatch(boolean ads, XdsRequest request, Set<String> knownResourceNames,
                             Consumer<Response> responseConsumer, boolean hasClusterChanged,
                             boolean allowDefaultEmptyEdsUpdate) {
        XdsStreams.Rejected rejected = streams.rejected(request.v3Request());
        if (rejected == null) {
            return cache.createWatch(false, request, knownResourceNames, responseConsumer, hasClusterChanged, false);
        }
        // A NACK acknowledges nothing, so the library still counts the rejected response's names as
        // unknown to the client and would answer them at once: with the version just rejected.
        Set<String> known = new HashSet<>(knownResourceNames);
        known.addAll(rejected.names());
        XdsRequest asOfRejected = XdsRequest.create(request.v3Request().toBuilder()
                .setVersionInfo(rejected.version()).build());
        return cache.createWatch(false, asOfRejected, known, responseConsumer, false, false);
    }

    @Override
    public DeltaWatch createDeltaWatch(DeltaXdsRequest request, String requesterVersion,
                                       Map<String, String> resourceVersions, Set<String> pendingResources,
                                       boolean isWildcard, Consumer<DeltaResponse> responseConsumer,
                                       boolean hasClusterChanged) {
        // Not reached: the door binds the state-of-the-world method only.
        return cache.createDeltaWatch(request, requesterVersion, resourceVersions, pendingResources, isWildcard,
                responseConsumer, hasClusterChanged);
    }
}
