package dev.rollcall.discovery.etcd;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The value stored under a worker's key: either the endpoint URL alone,
 * {@code grpc://10.0.0.5:7001}, or a JSON object
 * {@code {"endpoint":"grpc://10.0.0.5:7001","labels":{"zone":"eu-1"}}}. Its {@code instance_id} (which
 * registration writes) becomes the label {@link WorkerEndpoint#INSTANCE_ID_LABEL}, so that a worker
 * restarted in place is noticed from etcd alone; its {@code version} (which registration writes too)
 * becomes {@link WorkerEndpoint#VERSION_LABEL}, the version the registry claims, unverified (a
 * {@code rollcall.version} among the labels counts as the same claim when there is no
 * {@code version}). A version that {@link WorkerEndpoint#versionLabelProblem} refuses makes the
 * whole value invalid.
 * Other fields are ignored. Stateless; safe from any thread.
 */
final class WorkerValue {

    /** Far above any real value; a bigger one is not a worker description. */
    static final int MAX_BYTES = 64 * 1024;

    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(32).build())
            .build();

    private WorkerValue() {
    }

    /**
     * The endpoint a value describes.
     *
     * @throws IllegalArgumentException saying what is wrong with it (the caller adds the key)
     */
    static WorkerEndpoint parse(byte[] value) {
        if (value.length > MAX_BYTES) {
            throw new IllegalArgumentException("the value is " + value.length + " bytes, more than " + MAX_BYTES);
        }
        String text = new String(value, StandardCharsets.UTF_8).strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException("the value is empty; expected grpc://host:port or a JSON object"
                    + " with an \"endpoint\"");
        }
        if (!text.startsWith("{")) {
            return WorkerEndpoint.parse(text);
        }
        try (JsonParser p = JSON.createParser(text)) {
            p.nextToken();
            String endpoint = null;
            String instance = null;
            String version = null;
            Map<String, String> labels = Map.of();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "endpoint" -> {
                        if (t != JsonToken.VALUE_STRING) {
                            throw new IllegalArgumentException("\"endpoint\" is not a string");
                        }
                        endpoint = p.getText();
                    }
                    case "labels" -> labels = readLabels(p, t);
                    case "instance_id" -> {
                        if (t != JsonToken.VALUE_STRING) {
                            throw new IllegalArgumentException("\"instance_id\" is not a string");
                        }
                        instance = p.getText();
                    }
                    case "version" -> {
                        if (t != JsonToken.VALUE_STRING) {
                            throw new IllegalArgumentException("\"version\" is not a string");
                        }
                        version = p.getText();
                    }
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                throw new IllegalArgumentException("the JSON object is not closed");
            }
            if (p.nextToken() != null) {
                throw new IllegalArgumentException("there is more after the JSON object");
            }
            if (endpoint == null) {
                throw new IllegalArgumentException("the JSON object has no \"endpoint\"");
            }
            if (instance != null && !instance.isBlank()) {
                labels = new LinkedHashMap<>(labels);
                labels.put(WorkerEndpoint.INSTANCE_ID_LABEL, instance);
            }
            // A claim written as a label obeys the rule of one written as "version", which wins.
            String labelled = labels.get(WorkerEndpoint.VERSION_LABEL);
            if (labelled != null) {
                labels = new LinkedHashMap<>(labels);
                labels.remove(WorkerEndpoint.VERSION_LABEL);
                if (!labelled.isEmpty() && (version == null || version.isEmpty())) {
                    String problem = WorkerEndpoint.versionLabelProblem(labelled);
                    if (problem != null) {
                        throw new IllegalArgumentException("label \"" + WorkerEndpoint.VERSION_LABEL + "\": " + problem);
                    }
                    labels.put(WorkerEndpoint.VERSION_LABEL, labelled);
                }
            }
            if (version != null && !version.isEmpty()) {
                String problem = WorkerEndpoint.versionLabelProblem(version);
                if (problem != null) {
                    throw new IllegalArgumentException("\"version\": " + problem);
                }
                labels = new LinkedHashMap<>(labels);
                labels.put(WorkerEndpoint.VERSION_LABEL, version);
            }
            return WorkerEndpoint.parse(endpoint).withLabels(labels);
        } catch (JsonProcessingException e) {
            // Jackson's message quotes field names raw (a duplicate one, say).
            throw new IllegalArgumentException("it is not valid JSON: " + PeerText.escape(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // reading a String does no I/O
        }
    }

    private static Map<String, String> readLabels(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NULL) {
            return Map.of();
        }
        if (t != JsonToken.START_OBJECT) {
            throw new IllegalArgumentException("\"labels\" is not an object");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw new IllegalArgumentException("label \"" + PeerText.escape(name, 64) + "\" is not a string");
            }
            labels.put(name, p.getText());
        }
        return labels;
    }

    /**
     * What registration writes for {@code self}: its endpoint URL, its labels (the endpoint's own
     * labels winning over the worker's), its version and instance id.
     */
    static byte[] encode(WorkerInfo self) {
        Map<String, String> labels = new TreeMap<>(self.labels());
        labels.putAll(self.endpoint().labels());
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("endpoint", self.endpoint().url());
            g.writeObjectFieldStart("labels");
            for (Map.Entry<String, String> e : labels.entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeStringField("version", self.version());
            g.writeStringField("instance_id", self.instanceId());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to memory does no I/O
        }
        return out.toByteArray();
    }
}
