package dev.rollcall.discovery.zookeeper;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

/**
 * The data of a worker's node, in one of the forms fleets already use:
 * <ul>
 *   <li>Curator x-discovery's {@code ServiceInstance} JSON, as {@code ServiceDiscovery} writes it:
 *       {@code {"name":"workers","id":"...","address":"10.0.0.5","port":7001,"sslPort":null,
 *       "payload":...,"enabled":true,...}}. {@code sslPort}, when set, wins: the worker is reached
 *       over TLS there. The payload's {@code labels} object (or, when there is none, the payload's
 *       own string fields) become the endpoint's labels. {@code "enabled":false} means "not now":
 *       no endpoint, and no complaint.
 *   <li>Rollcall's JSON, as the etcd backend writes it: {@code {"endpoint":"grpc://...","labels":{...}}}.
 *   <li>The endpoint URL alone: {@code grpc://10.0.0.5:7001}.
 * </ul>
 * The version the node claims, x-discovery's {@code payload.version} (which registration writes) or
 * Rollcall JSON's {@code version}, becomes {@link WorkerEndpoint#VERSION_LABEL}: a claim, not
 * verified; a {@code rollcall.version} among the labels is the same claim (the field wins). A
 * version that is not a string, or that {@link WorkerEndpoint#versionLabelProblem} refuses, makes
 * the node invalid; an empty one is no claim.
 * Stateless; safe from any thread.
 */
final class WorkerNode {

    /** Far above any real value; a bigger one is not a worker description. */
    static final int MAX_BYTES = 64 * 1024;

    private static final JsonMapper JSON = JsonMapper.builder(com.fasterxml.jackson.core.JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(32).build()).build())
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS.mappedFeature())
            .build();

    /** Writes x-discovery's own format, with its own serializer: Curator's readers take it as theirs. */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private static final JsonInstanceSerializer<Map> SERIALIZER = new JsonInstanceSerializer<>(Map.class);

    private WorkerNode() {
    }

    /**
     * The endpoint a node's data describes; empty for an x-discovery instance marked disabled.
     *
     * @throws IllegalArgumentException saying what is wrong with it (the caller adds the path)
     */
    static Optional<WorkerEndpoint> parse(byte[] data) {
        if (data == null || data.length == 0) {
            throw new IllegalArgumentException("the node has no data; expected grpc://host:port or an x-discovery"
                    + " ServiceInstance JSON");
        }
        if (data.length > MAX_BYTES) {
            throw new IllegalArgumentException("the data is " + data.length + " bytes, more than " + MAX_BYTES);
        }
        String text = new String(data, StandardCharsets.UTF_8).strip();
        if (!text.startsWith("{")) {
            return Optional.of(WorkerEndpoint.parse(text));
        }
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            // Jackson's message may quote a token of the data raw.
            throw new IllegalArgumentException("it is not valid JSON: " + PeerText.escape(e.getOriginalMessage()));
        }
        if (root.has("endpoint")) {
            JsonNode endpoint = root.get("endpoint");
            if (!endpoint.isTextual()) {
                throw new IllegalArgumentException("\"endpoint\" is not a string");
            }
            return Optional.of(WorkerEndpoint.parse(endpoint.asText()).withLabels(
                    withVersion(labels(root.get("labels"), "labels"), root.get("version"), "version")));
        }
        JsonNode address = root.get("address");
        if (address == null || !address.isTextual() || address.asText().isBlank()) {
            throw new IllegalArgumentException("the JSON object has neither an \"address\" (x-discovery) nor an"
                    + " \"endpoint\"");
        }
        JsonNode enabled = root.get("enabled");
        if (enabled != null && enabled.isBoolean() && !enabled.asBoolean()) {
            return Optional.empty();
        }
        Integer sslPort = port(root, "sslPort");
        Integer port = port(root, "port");
        if (sslPort == null && port == null) {
            throw new IllegalArgumentException("the x-discovery instance has neither \"port\" nor \"sslPort\"");
        }
        boolean tls = sslPort != null;
        int p = tls ? sslPort : port;
        JsonNode payload = root.get("payload");
        Map<String, String> labels = payloadLabels(payload);
        if (payload != null && payload.isObject()) {
            labels = withVersion(labels, payload.get("version"), "payload.version");
        }
        return Optional.of(new WorkerEndpoint(address.asText(), p, tls, labels));
    }

    /** {@code labels} with the claimed version of {@code node} as {@link WorkerEndpoint#VERSION_LABEL}, if any. */
    private static Map<String, String> withVersion(Map<String, String> labels, JsonNode node, String where) {
        labels = claimAmongLabels(labels);
        if (node == null || node.isNull()) {
            return labels;
        }
        if (!node.isTextual()) {
            throw new IllegalArgumentException("\"" + where + "\" is not a string");
        }
        String version = node.asText();
        if (version.isEmpty()) {
            return labels;
        }
        String problem = WorkerEndpoint.versionLabelProblem(version);
        if (problem != null) {
            throw new IllegalArgumentException("\"" + where + "\": " + problem);
        }
        Map<String, String> with = new LinkedHashMap<>(labels);
        with.put(WorkerEndpoint.VERSION_LABEL, version);
        return with;
    }

    /**
     * {@code labels} whose {@link WorkerEndpoint#VERSION_LABEL}, when the writer put one among them,
     * obeys the rule of a claimed version (an empty one is no claim): the label is the claim however
     * it got there.
     */
    private static Map<String, String> claimAmongLabels(Map<String, String> labels) {
        String claimed = labels.get(WorkerEndpoint.VERSION_LABEL);
        if (claimed == null) {
            return labels;
        }
        if (claimed.isEmpty()) {
            Map<String, String> without = new LinkedHashMap<>(labels);
            without.remove(WorkerEndpoint.VERSION_LABEL);
            return without;
        }
        String problem = WorkerEndpoint.versionLabelProblem(claimed);
        if (problem != null) {
            throw new IllegalArgumentException("label \"" + WorkerEndpoint.VERSION_LABEL + "\": " + problem);
        }
        return labels;
    }

    private static Integer port(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.canConvertToInt() || !n.isIntegralNumber()) {
            throw new IllegalArgumentException("\"" + field + "\" is not a port number: " + PeerText.escape(n.toString(), 64));
        }
        return n.asInt();
    }

    /** The payload's {@code labels}, or its own string fields; type hints ({@code @class}) are not labels. */
    private static Map<String, String> payloadLabels(JsonNode payload) {
        if (payload == null || !payload.isObject()) {
            return Map.of();
        }
        if (payload.has("labels")) {
            return labels(payload.get("labels"), "payload.labels");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : payload.properties()) {
            if (!e.getKey().startsWith("@") && e.getValue().isTextual()) {
                labels.put(e.getKey(), e.getValue().asText());
            }
        }
        return labels;
    }

    private static Map<String, String> labels(JsonNode node, String where) {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("\"" + where + "\" is not an object");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (e.getKey().startsWith("@")) {
                continue;
            }
            if (!e.getValue().isTextual()) {
                throw new IllegalArgumentException("label \"" + PeerText.escape(e.getKey(), 64) + "\" in \"" + where
                        + "\" is not a string");
            }
            labels.put(e.getKey(), e.getValue().asText());
        }
        return labels;
    }

    /**
     * What registration writes for {@code self}: an x-discovery {@code ServiceInstance} named
     * {@code name} with id {@code id}, its address and port (or sslPort under TLS), and a payload
     * of its labels (the endpoint's winning over the worker's), version and instance id.
     */
    @SuppressWarnings({"rawtypes", "unchecked"})
    static byte[] encode(WorkerInfo self, String name, String id) {
        Map<String, String> labels = new TreeMap<>(self.labels());
        labels.putAll(self.endpoint().labels());
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("labels", labels);
        payload.put("version", self.version());
        payload.put("instanceId", self.instanceId());
        WorkerEndpoint e = self.endpoint();
        Integer port = e.tls() ? null : e.port();
        Integer sslPort = e.tls() ? e.port() : null;
        ServiceInstance<Map> instance = new ServiceInstance<>(name, id, e.host(), port, sslPort, (Map) payload,
                System.currentTimeMillis(), ServiceType.DYNAMIC, null, true);
        try {
            return SERIALIZER.serialize(instance);
        } catch (Exception ex) {
            throw new IllegalStateException("cannot write the x-discovery instance of " + e.url(), ex);
        }
    }
}
