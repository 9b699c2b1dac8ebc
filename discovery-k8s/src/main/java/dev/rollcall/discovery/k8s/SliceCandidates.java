package dev.rollcall.discovery.k8s;

import dev.rollcall.api.WorkerEndpoint;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the EndpointSlices of one service into the candidate set: every address of every ready
 * endpoint, on the port the {@link PortSelector} picks, merged over all slices. A pure function,
 * so it is tested without an API server.
 *
 * <p>Readiness follows the EndpointSlice API: an endpoint is a candidate when
 * {@code conditions.ready} is true or unset ("nil should be interpreted as true") and
 * {@code conditions.terminating} is not true. The terminating check matters for services with
 * {@code publishNotReadyAddresses}, whose endpoints stay "ready" while their pods shut down.
 *
 * <p>The same address can briefly appear in two slices while the EndpointSlice controller moves
 * it; it counts once, and it is a candidate if it is ready in either.
 */
final class SliceCandidates {

    static final String ZONE = "zone";
    static final String NODE = "node";
    static final String POD = "pod";

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    /**
     * The candidates, and one message per slice or address that was skipped (naming the slice).
     *
     * @param endpoints in a stable order (slices by name, then as listed)
     * @param problems  what was skipped and why, each naming its slice
     */
    record Result(Set<WorkerEndpoint> endpoints, List<String> problems) {
    }

    private SliceCandidates() {
    }

    static Result of(Collection<EndpointSlice> slices, PortSelector ports, boolean tls) {
        List<EndpointSlice> ordered = new ArrayList<>(slices);
        ordered.sort(Comparator.comparing(SliceCandidates::name));
        Map<String, WorkerEndpoint> byUrl = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (EndpointSlice slice : ordered) {
            List<Endpoint> endpoints = slice.getEndpoints() == null ? List.of() : slice.getEndpoints();
            if (endpoints.isEmpty()) {
                continue;   // a service without pods has slices with no endpoints and often no ports: not a problem
            }
            String where = "EndpointSlice " + namespace(slice) + "/" + name(slice);
            String type = slice.getAddressType();
            if (!"IPv4".equals(type) && !"IPv6".equals(type) && !"FQDN".equals(type)) {
                problems.add(where + ": skipping the slice: addressType '" + type + "' is not IPv4, IPv6 or FQDN");
                continue;
            }
            PortSelector.Choice choice = ports.choose(slice.getPorts());
            if (choice instanceof PortSelector.Unusable unusable) {
                problems.add(where + ": skipping the slice: " + unusable.reason());
                continue;
            }
            int port = ((PortSelector.Chosen) choice).port();
            for (Endpoint endpoint : endpoints) {
                if (endpoint == null || !isCandidate(endpoint.getConditions())) {
                    continue;
                }
                Map<String, String> labels = labels(endpoint);
                List<String> addresses = endpoint.getAddresses() == null ? List.of() : endpoint.getAddresses();
                for (String address : addresses) {
                    try {
                        WorkerEndpoint candidate = endpoint(type, address, port, tls, labels);
                        byUrl.putIfAbsent(candidate.url(), candidate);
                    } catch (IllegalArgumentException e) {
                        problems.add(where + ": skipping address '" + address + "': " + e.getMessage());
                    }
                }
            }
        }
        return new Result(Collections.unmodifiableSet(new LinkedHashSet<>(byUrl.values())), List.copyOf(problems));
    }

    /** Ready unless said otherwise, and not terminating. */
    static boolean isCandidate(EndpointConditions conditions) {
        if (conditions == null) {
            return true;
        }
        return !Boolean.FALSE.equals(conditions.getReady()) && !Boolean.TRUE.equals(conditions.getTerminating());
    }

    private static Map<String, String> labels(Endpoint endpoint) {
        Map<String, String> labels = new LinkedHashMap<>();
        putIfPresent(labels, ZONE, endpoint.getZone());
        putIfPresent(labels, NODE, endpoint.getNodeName());
        ObjectReference ref = endpoint.getTargetRef();
        if (ref != null && "Pod".equals(ref.getKind())) {
            putIfPresent(labels, POD, ref.getName());
        }
        return labels;
    }

    private static void putIfPresent(Map<String, String> labels, String key, String value) {
        if (value != null && !value.isBlank()) {
            labels.put(key, value);
        }
    }

    private static WorkerEndpoint endpoint(String type, String address, int port, boolean tls,
                                           Map<String, String> labels) {
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("it is empty");
        }
        String scheme = tls ? "grpcs://" : "grpc://";
        String text = switch (type) {
            case "IPv4" -> {
                if (!isIpv4(address)) {
                    throw new IllegalArgumentException("it is not an IPv4 address");
                }
                yield scheme + address + ":" + port;
            }
            case "IPv6" -> {
                if (address.indexOf(':') < 0) {
                    throw new IllegalArgumentException("it is not an IPv6 address");
                }
                yield scheme + "[" + address + "]:" + port;
            }
            default -> {
                // FQDN (deprecated by Kubernetes, still accepted): a host name, possibly written absolute.
                String host = address.endsWith(".") ? address.substring(0, address.length() - 1) : address;
                if (host.indexOf(':') >= 0) {
                    throw new IllegalArgumentException("it is not a host name");
                }
                yield scheme + host + ":" + port;
            }
        };
        return WorkerEndpoint.parse(text).withLabels(labels);
    }

    private static boolean isIpv4(String address) {
        Matcher m = IPV4.matcher(address);
        if (!m.matches()) {
            return false;
        }
        for (int i = 1; i <= 4; i++) {
            if (Integer.parseInt(m.group(i)) > 255) {
                return false;
            }
        }
        return true;
    }

    private static String name(EndpointSlice slice) {
        return slice.getMetadata() == null ? "" : Objects.toString(slice.getMetadata().getName(), "");
    }

    private static String namespace(EndpointSlice slice) {
        return slice.getMetadata() == null ? "" : Objects.toString(slice.getMetadata().getNamespace(), "");
    }
}
