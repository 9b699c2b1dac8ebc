package dev.rollcall.server.internal;

import java.util.Map;

/**
 * Where a worker's zone comes from, once for every door of the server: the fleet API's
 * {@code FleetWorker.zone} and xDS's locality must name the same zone. The Kubernetes label
 * {@code topology.kubernetes.io/zone}, else {@code zone}, else none. Stateless.
 */
public final class WorkerZone {

    static final String K8S_ZONE_LABEL = "topology.kubernetes.io/zone";
    static final String ZONE_LABEL = "zone";

    private WorkerZone() {
    }

    /** The zone {@code labels} name, raw (peer text: escape it on the way out); {@code ""} for none. */
    public static String of(Map<String, String> labels) {
        return labels.getOrDefault(K8S_ZONE_LABEL, labels.getOrDefault(ZONE_LABEL, ""));
    }
}
