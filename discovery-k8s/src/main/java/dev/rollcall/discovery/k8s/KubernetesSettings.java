package dev.rollcall.discovery.k8s;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The validated settings of one {@code k8s} backend.
 *
 * @param service        the service whose EndpointSlices are followed (label {@code kubernetes.io/service-name})
 * @param namespace      its namespace
 * @param port           which slice port is the workers' gRPC port
 * @param tls            whether workers are reached over TLS ({@code grpcs})
 * @param access         how to reach the API server
 * @param requestTimeout connect and request timeout of each API call (the watch itself is long-lived)
 * @param resync         how often the informer re-delivers its cache (zero: never)
 * @param timings        reconnect and staleness timings (tests shorten them)
 * @param ipFamily       which address of a dual-stack pod becomes its candidate
 * @param keepaliveTime  while it watches, how often the backend asks the API server for a sign of life
 * @param versionLabel   the pod label that holds the version a pod claims; null: pods are not watched
 * @param podSelector    which pods of the namespace are watched for it (equality, ANDed); empty: all
 */
record KubernetesSettings(String service, String namespace, PortSelector port, boolean tls,
                                  ClusterAccess access, Duration requestTimeout, Duration resync, Timings timings,
                                  IpFamily ipFamily, Duration keepaliveTime, String versionLabel,
                                  Map<String, String> podSelector) {

    KubernetesSettings {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(port, "port");
        Objects.requireNonNull(access, "access");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(resync, "resync");
        Objects.requireNonNull(timings, "timings");
        Objects.requireNonNull(ipFamily, "ipFamily");
        Objects.requireNonNull(keepaliveTime, "keepaliveTime");
        podSelector = Map.copyOf(podSelector);
    }

    /**
     * @param reconnectInterval the first delay before re-watching or re-listing after a failure; it
     *                          doubles up to 32 times this (fabric8's backoff)
     * @param staleAfter        how long the watch may be down before the backend reports an error: a
     *                          routine watch restart (every 5 to 10 minutes, about a second) is not one
     * @param watchCheck        how often the backend looks at the watch's state
     */
    record Timings(Duration reconnectInterval, Duration staleAfter, Duration watchCheck) {
        static final Timings DEFAULT = new Timings(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(1));
    }

    KubernetesSettings withTimings(Timings newTimings) {
        return new KubernetesSettings(service, namespace, port, tls, access, requestTimeout, resync, newTimings,
                ipFamily, keepaliveTime, versionLabel, podSelector);
    }

    /** How long a silent API server may go unreported: {@code keepalive-time + request-timeout}. */
    Duration silenceBound() {
        return keepaliveTime.plus(requestTimeout);
    }
}
