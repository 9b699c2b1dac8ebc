package dev.rollcall.discovery.k8s;

import dev.rollcall.api.PeerText;
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
import java.util.stream.Collectors;

/**
 * Turns the EndpointSlices of one service into the candidate set: one candidate per pod, on the
 * port the {@link PortSelector} picks, merged over all slices. A pure function, so it is tested
 * without an API server.
 *
 * <p><b>Which endpoints.</b> An endpoint is <i>serving</i> when {@code conditions.serving} is true,
 * or, when that is unset, {@code conditions.ready} is true or unset ("nil should be interpreted as
 * true"). {@code serving} matters for services with {@code publishNotReadyAddresses}, whose
 * endpoints stay "ready" whatever the pod's readiness. A serving endpoint that is not terminating
 * is a plain candidate, and so is one that does not serve only because its pod waits for its readiness
 * gates ({@link PodVersions#heldOnlyByGates}: a gate such as Rollcall's own, which needs the pod probed
 * first); one that is terminating (its pod is shutting down but still answers) is a
 * candidate labelled {@value #STATE}={@value #DRAINING}, so that the resolver keeps it out of new
 * work but can say why (when every endpoint is terminating, every candidate carries the label). An
 * endpoint that is not serving is no candidate.
 *
 * <p><b>One candidate per pod.</b> A dual-stack service lists each pod in an IPv4 and an IPv6
 * slice, and the EndpointSlice controller can briefly list a pod in two slices while it moves it.
 * Endpoints are grouped by their {@code targetRef} (the pod), and the group gives one candidate:
 * the address of the family {@link IpFamily} prefers, then the better state (serving before
 * draining), then the first slice by name. An endpoint's addresses are fungible (the API lets
 * clients use only the first), so a pod's candidate is its first usable address. Endpoints
 * without a {@code targetRef} cannot be grouped: each of their addresses is a candidate, merged by
 * URL.
 *
 * <p><b>Labels.</b> {@code zone} ({@code endpoint.zone}), {@code zone-hints} (the zones of
 * {@code hints.forZones}, comma-separated), {@code node}, {@code hostname}, {@code pod} (the
 * {@code targetRef} pod's name), {@value #INSTANCE_ID} (its UID) and {@value #STATE}, each when
 * set; and {@value #VERSION} (the version the pod's {@code version-label} claims, unverified),
 * when {@link PodVersions} knows the pod. An endpoint whose pod claims a version that
 * {@link WorkerEndpoint#versionLabelProblem} refuses is skipped, naming the slice and the pod.
 */
final class SliceCandidates {

    static final String ZONE = "zone";
    static final String ZONE_HINTS = "zone-hints";
    static final String NODE = "node";
    static final String HOSTNAME = "hostname";
    static final String POD = "pod";
    /** The label every backend uses for a worker process's identity; here the pod's UID. */
    static final String INSTANCE_ID = dev.rollcall.api.WorkerEndpoint.INSTANCE_ID_LABEL;
    /** The label the resolver reads a candidate's lifecycle state from. */
    static final String STATE = dev.rollcall.api.WorkerEndpoint.STATE_LABEL;
    static final String DRAINING = dev.rollcall.api.WorkerEndpoint.STATE_DRAINING;
    /** The label of the version a backend's registry claims for a worker; here its pod's version label. */
    static final String VERSION = dev.rollcall.api.WorkerEndpoint.VERSION_LABEL;

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    /**
     * The candidates, and one message per slice or address that was skipped (naming the slice).
     *
     * @param endpoints in a stable order (slices by name, then as listed)
     * @param problems  what was skipped and why, each naming its slice
     */
    record Result(Set<WorkerEndpoint> endpoints, List<String> problems) {
    }

    /** Whether an endpoint is used, and how. */
    enum State { SERVING, DRAINING, NONE }

    /** One usable endpoint address, competing with the others of its pod. */
    private record Found(WorkerEndpoint candidate, int familyRank, State state) {
        boolean beats(Found other) {
            if (familyRank != other.familyRank) {
                return familyRank < other.familyRank;
            }
            return state == State.SERVING && other.state != State.SERVING;
        }
    }

    private SliceCandidates() {
    }

    static Result of(Collection<EndpointSlice> slices, PortSelector ports, boolean tls) {
        return of(slices, ports, tls, IpFamily.DEFAULT);
    }

    static Result of(Collection<EndpointSlice> slices, PortSelector ports, boolean tls, IpFamily family) {
        return of(slices, ports, tls, family, null);
    }

    /** As above, with each pod's claimed version from {@code versions} (null: none). */
    static Result of(Collection<EndpointSlice> slices, PortSelector ports, boolean tls, IpFamily family,
                     PodVersions versions) {
        List<EndpointSlice> ordered = new ArrayList<>(slices);
        ordered.sort(Comparator.comparing(SliceCandidates::name));
        Map<String, Found> byPod = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (EndpointSlice slice : ordered) {
            List<Endpoint> endpoints = slice.getEndpoints() == null ? List.of() : slice.getEndpoints();
            if (endpoints.isEmpty()) {
                continue;   // a service without pods has slices with no endpoints and often no ports: not a problem
            }
            // Names, types and addresses come from the API server: escaped and bounded before any log or reason.
            String where = "EndpointSlice " + PeerText.escape(namespace(slice)) + "/" + PeerText.escape(name(slice));
            String type = slice.getAddressType();
            if (!"IPv4".equals(type) && !"IPv6".equals(type) && !"FQDN".equals(type)) {
                problems.add(where + ": skipping the slice: addressType '" + PeerText.escape(type)
                        + "' is not IPv4, IPv6 or FQDN");
                continue;
            }
            int rank = family.rank(type);
            if (rank < 0) {
                continue;   // the other family of a dual-stack service
            }
            PortSelector.Choice choice = ports.choose(slice.getPorts());
            if (choice instanceof PortSelector.Unusable unusable) {
                problems.add(where + ": skipping the slice: " + PeerText.escape(unusable.reason(), 1024));
                continue;
            }
            int port = ((PortSelector.Chosen) choice).port();
            for (Endpoint endpoint : endpoints) {
                State state = endpoint == null ? State.NONE : state(endpoint.getConditions());
                if (state == State.NONE && versions != null && heldOnlyByGates(endpoint, versions)) {
                    state = State.SERVING;  // waits for a gate, maybe Rollcall's own: the resolver verifies it
                }
                if (state == State.NONE) {
                    continue;
                }
                Map<String, String> labels = labels(endpoint, state);
                if (versions != null) {
                    String problem = addClaimedVersion(labels, endpoint.getTargetRef(), versions);
                    if (problem != null) {
                        problems.add(where + ": skipping pod '" + PeerText.escape(podName(endpoint.getTargetRef()))
                                + "': its label " + versions.label() + ": " + problem);
                        continue;
                    }
                }
                String pod = podKey(endpoint.getTargetRef());
                List<String> addresses = endpoint.getAddresses() == null ? List.of() : endpoint.getAddresses();
                for (String address : addresses) {
                    WorkerEndpoint candidate;
                    try {
                        candidate = endpoint(type, address, port, tls, labels);
                    } catch (IllegalArgumentException e) {
                        problems.add(where + ": skipping address '" + PeerText.escape(address) + "': "
                                + PeerText.escape(e.getMessage()));
                        continue;
                    }
                    Found found = new Found(candidate, rank, state);
                    byPod.merge(pod != null ? pod : "url " + candidate.url(), found,
                            (earlier, later) -> later.beats(earlier) ? later : earlier);
                    if (pod != null) {
                        break;      // fungible: a pod's first usable address stands for the others
                    }
                }
            }
        }
        Map<String, WorkerEndpoint> byUrl = new LinkedHashMap<>();
        byPod.values().forEach(f -> byUrl.putIfAbsent(f.candidate().url(), f.candidate()));
        return new Result(Collections.unmodifiableSet(new LinkedHashSet<>(byUrl.values())), List.copyOf(problems));
    }

    /** A not-serving endpoint, not terminating, whose pod waits for nothing but its readiness gates. */
    private static boolean heldOnlyByGates(Endpoint endpoint, PodVersions versions) {
        EndpointConditions conditions = endpoint.getConditions();
        return (conditions == null || !Boolean.TRUE.equals(conditions.getTerminating()))
                && versions.heldOnlyByGates(endpoint.getTargetRef());
    }

    /** Serving (unset: ready, unset: true) and not terminating; serving and terminating is draining. */
    static State state(EndpointConditions conditions) {
        if (conditions == null) {
            return State.SERVING;
        }
        Boolean serving = conditions.getServing() != null ? conditions.getServing() : conditions.getReady();
        if (Boolean.FALSE.equals(serving)) {
            return State.NONE;
        }
        return Boolean.TRUE.equals(conditions.getTerminating()) ? State.DRAINING : State.SERVING;
    }

    /** The pod an endpoint belongs to, or null when it names none. */
    private static String podKey(ObjectReference ref) {
        if (ref == null || ref.getName() == null || ref.getName().isBlank()) {
            return null;
        }
        return Objects.toString(ref.getKind(), "") + " " + Objects.toString(ref.getNamespace(), "") + "/"
                + ref.getName();
    }

    /** Adds the pod's claimed version to {@code labels}; what is wrong with it, or null. */
    private static String addClaimedVersion(Map<String, String> labels, ObjectReference ref, PodVersions versions) {
        String claimed = versions.claimed(ref);
        if (claimed == null || claimed.isEmpty()) {
            return null;
        }
        String problem = WorkerEndpoint.versionLabelProblem(claimed);
        if (problem == null) {
            labels.put(VERSION, claimed);
        }
        return problem;
    }

    private static String podName(ObjectReference ref) {
        return Objects.toString(ref.getNamespace(), "") + "/" + Objects.toString(ref.getName(), "");
    }

    private static Map<String, String> labels(Endpoint endpoint, State state) {
        Map<String, String> labels = new LinkedHashMap<>();
        putIfPresent(labels, ZONE, endpoint.getZone());
        if (endpoint.getHints() != null && endpoint.getHints().getForZones() != null) {
            String zones = endpoint.getHints().getForZones().stream()
                    .filter(Objects::nonNull).map(z -> z.getName())
                    .filter(z -> z != null && !z.isBlank()).collect(Collectors.joining(","));
            putIfPresent(labels, ZONE_HINTS, zones);
        }
        putIfPresent(labels, NODE, endpoint.getNodeName());
        putIfPresent(labels, HOSTNAME, endpoint.getHostname());
        ObjectReference ref = endpoint.getTargetRef();
        if (ref != null && "Pod".equals(ref.getKind())) {
            putIfPresent(labels, POD, ref.getName());
            putIfPresent(labels, INSTANCE_ID, ref.getUid());
        }
        if (state == State.DRAINING) {
            labels.put(STATE, DRAINING);
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
