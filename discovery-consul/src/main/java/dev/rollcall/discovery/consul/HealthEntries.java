package dev.rollcall.discovery.consul;

import com.ecwid.consul.json.GsonFactory;
import com.ecwid.consul.v1.health.model.Check;
import com.ecwid.consul.v1.health.model.HealthService;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns the body of {@code GET /v1/health/service/<name>} into worker endpoints, one entry at a
 * time, so that one malformed entry is skipped (with the reason) and the rest are kept.
 * consul-api's own {@code getHealthServices} parses the whole array in one go, where a single
 * mistyped field would throw every instance away; we map each entry to its {@code HealthService}
 * model separately instead.
 *
 * <p>An entry becomes {@code grpc://address:port}, or {@code grpcs://} when its service meta has
 * {@code rollcall-scheme=grpcs}; the address is the service's, or the node's when the service has
 * none. Labels: the service meta as is, plus {@code consul.service-id}, {@code consul.node},
 * {@code consul.datacenter} and {@code consul.tags} (comma-separated, in order), and
 * {@code rollcall.instance-id} from the meta {@code rollcall-instance} Rollcall workers write, and
 * {@code rollcall.version} ({@link WorkerEndpoint#VERSION_LABEL}, a claim, not verified) from the
 * meta key {@code version-meta} names ({@code version} by default, and from no other meta key, not
 * even one named {@code rollcall.version}); an entry whose claimed version
 * {@link WorkerEndpoint#versionLabelProblem} refuses is skipped, naming it. An entry whose
 * node has a critical check ({@code serfHealth}, node maintenance) is left out, whether or not
 * the query asked for passing entries only.
 */
final class HealthEntries {

    static final String SCHEME_META = "rollcall-scheme";
    static final String LABEL_SERVICE_ID = "consul.service-id";
    static final String LABEL_NODE = "consul.node";
    static final String LABEL_DATACENTER = "consul.datacenter";
    static final String LABEL_TAGS = "consul.tags";
    /** What Rollcall workers write into their service meta: the instance ID of the running process. */
    static final String INSTANCE_META = "rollcall-instance";
    /** The label every backend uses for a worker's instance ID, when the backend knows it. */
    static final String LABEL_INSTANCE_ID = dev.rollcall.api.WorkerEndpoint.INSTANCE_ID_LABEL;

    /**
     * @param endpoints  the usable entries, in Consul's order, one per URL
     * @param skipped    why each unusable entry was skipped, naming it
     * @param duplicates entries whose URL an earlier entry already had
     * @param nodeDown   entries left out because a check of their node (serfHealth, node
     *                   maintenance) is critical, naming the check
     */
    record Parsed(Set<WorkerEndpoint> endpoints, List<String> skipped, List<String> duplicates,
                  List<String> nodeDown) {
    }

    private HealthEntries() {
    }

    /**
     * @param versionMeta the meta key of the claimed version, or null for none
     * @throws IllegalArgumentException when the body as a whole is not a JSON array (nothing of it
     *                                  can be trusted)
     */
    static Parsed parse(String body, String versionMeta) {
        JsonElement root;
        try {
            root = JsonParser.parseString(body == null ? "" : body);
        } catch (JsonParseException e) {
            // Gson's message spans lines and its JSON path quotes the answer's field names raw.
            throw new IllegalArgumentException("the health answer is not JSON: " + PeerText.escape(e.getMessage()), e);
        }
        if (!root.isJsonArray()) {
            throw new IllegalArgumentException("the health answer is not a JSON array but " + kind(root));
        }
        JsonArray entries = root.getAsJsonArray();
        Map<String, WorkerEndpoint> byUrl = new LinkedHashMap<>();
        List<String> skipped = new ArrayList<>();
        List<String> duplicates = new ArrayList<>();
        List<String> nodeDown = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            JsonElement entry = entries.get(i);
            String name = name(entry, i);
            WorkerEndpoint endpoint;
            try {
                if (!entry.isJsonObject()) {
                    throw new IllegalArgumentException("it is " + kind(entry) + ", not an object");
                }
                HealthService model = GsonFactory.getGson().fromJson(entry, HealthService.class);
                String criticalNodeCheck = criticalNodeCheck(model);
                if (criticalNodeCheck != null) {
                    nodeDown.add(name + ": its node's check '" + PeerText.escape(criticalNodeCheck) + "' is critical");
                    continue;
                }
                endpoint = endpoint(model, versionMeta);
            } catch (JsonParseException e) {
                skipped.add(name + ": it does not match Consul's health entry format ("
                        + PeerText.escape(rootMessage(e)) + ")");
                continue;
            } catch (IllegalArgumentException | IllegalStateException e) {
                skipped.add(name + ": " + PeerText.escape(e.getMessage()));
                continue;
            }
            WorkerEndpoint earlier = byUrl.putIfAbsent(endpoint.url(), endpoint);
            if (earlier != null) {
                duplicates.add(name + " has the address of " + PeerText.escape(earlier.labels().get(LABEL_SERVICE_ID)));
            }
        }
        return new Parsed(Collections.unmodifiableSet(new LinkedHashSet<>(byUrl.values())), List.copyOf(skipped),
                List.copyOf(duplicates), List.copyOf(nodeDown));
    }

    /**
     * The ID of a critical node-level check of the entry (one without a service: {@code serfHealth},
     * {@code _node_maintenance}), or null. {@code ?passing} already leaves such entries out; without
     * it Consul returns them, and a worker on a dead or drained node must not stay published until
     * the reaper removes it.
     */
    private static String criticalNodeCheck(HealthService entry) {
        if (entry.getChecks() == null) {
            return null;
        }
        for (Check check : entry.getChecks()) {
            if (check != null && (check.getServiceId() == null || check.getServiceId().isEmpty())
                    && check.getStatus() == Check.CheckStatus.CRITICAL) {
                return String.valueOf(check.getCheckId());
            }
        }
        return null;
    }

    private static WorkerEndpoint endpoint(HealthService entry, String versionMeta) {
        HealthService.Service service = entry.getService();
        if (service == null) {
            throw new IllegalArgumentException("it has no Service");
        }
        Integer port = service.getPort();
        if (port == null || port == 0) {
            throw new IllegalArgumentException("it has no port (registered without one)");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535");
        }
        HealthService.Node node = entry.getNode();
        String address = blankToNull(service.getAddress());
        if (address == null && node != null) {
            address = blankToNull(node.getAddress());
        }
        if (address == null) {
            throw new IllegalArgumentException("it has neither a service address nor a node address");
        }
        Map<String, String> meta = service.getMeta() == null ? Map.of() : service.getMeta();
        String scheme = meta.getOrDefault(SCHEME_META, "grpc").toLowerCase(Locale.ROOT);
        boolean tls = switch (scheme) {
            case "grpc", "http" -> false;
            case "grpcs", "https" -> true;
            default -> throw new IllegalArgumentException(
                    "its meta " + SCHEME_META + "='" + meta.get(SCHEME_META) + "' is not grpc or grpcs");
        };
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_SERVICE_ID, String.valueOf(service.getId()));
        if (node != null && node.getNode() != null) {
            labels.put(LABEL_NODE, node.getNode());
        }
        if (node != null && node.getDatacenter() != null) {
            labels.put(LABEL_DATACENTER, node.getDatacenter());
        }
        if (service.getTags() != null && !service.getTags().isEmpty()) {
            labels.put(LABEL_TAGS, String.join(",", service.getTags()));
        }
        String instance = meta.get(INSTANCE_META);
        if (instance != null && !instance.isBlank()) {
            labels.put(LABEL_INSTANCE_ID, instance);
        }
        String version = versionMeta == null ? null : meta.get(versionMeta);
        if (version != null && !version.isEmpty()) {
            String problem = WorkerEndpoint.versionLabelProblem(version);
            if (problem != null) {
                throw new IllegalArgumentException("its meta " + versionMeta + ": " + problem);
            }
            labels.put(WorkerEndpoint.VERSION_LABEL, version);
        }
        // The claimed version comes from version-meta alone, checked above: a meta key named like the
        // label would make a claim that no check saw.
        meta.forEach((k, v) -> {
            if (k != null && v != null && !k.equals(SCHEME_META) && !k.equals(WorkerEndpoint.VERSION_LABEL)) {
                labels.putIfAbsent(k, v);
            }
        });
        WorkerEndpoint candidate = new WorkerEndpoint(address, port, tls, labels);
        WorkerEndpoint.parse(candidate.url());  // the same host rules as every other backend; throws with the reason
        return candidate;
    }

    /**
     * "service ID 'w-1' on node 'n-1'" as far as the entry says, else "entry 3": stable while the
     * entry stays, so that it is warned about once. Both come from the agent: escaped and bounded.
     */
    private static String name(JsonElement entry, int i) {
        String id = null;
        String node = null;
        if (entry.isJsonObject()) {
            id = text(entry.getAsJsonObject(), "Service", "ID");
            node = text(entry.getAsJsonObject(), "Node", "Node");
        }
        if (id == null && node == null) {
            return "entry " + i;
        }
        StringBuilder s = new StringBuilder();
        if (id != null) {
            s.append("service ID '").append(PeerText.escape(id)).append('\'');
        }
        if (node != null) {
            s.append(id != null ? " on " : "").append("node '").append(PeerText.escape(node)).append('\'');
        }
        return s.toString();
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }

    private static String text(JsonObject o, String outer, String inner) {
        JsonElement e = o.get(outer);
        if (e == null || !e.isJsonObject()) {
            return null;
        }
        JsonElement v = e.getAsJsonObject().get(inner);
        return v != null && v.isJsonPrimitive() ? v.getAsString() : null;
    }

    private static String kind(JsonElement e) {
        if (e.isJsonNull()) {
            return "null";
        }
        if (e.isJsonObject()) {
            return "an object";
        }
        return e.isJsonArray() ? "an array" : "a value";
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }
}
