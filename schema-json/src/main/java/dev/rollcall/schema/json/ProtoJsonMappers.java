package dev.rollcall.schema.json;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.JsonMappers;
import dev.rollcall.api.registry.JsonMappingException;
import dev.rollcall.api.registry.JsonMappingException.Reason;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.ProtoSymbols;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * {@link JsonMappers} over the schemas of a snapshot, with protobuf's own JSON mapping
 * ({@code protobuf-java-util}'s {@link JsonFormat}) and dynamic messages: no generated classes.
 *
 * <pre>{@code
 * FleetSnapshot snapshot = resolver.pin();
 * JsonMappers json = ProtoJsonMappers.over(snapshot);          // that snapshot's schemas
 * byte[] request = json.requestFromJson("demo.v1.Orders", "Place", body);
 * WorkerInfo worker = snapshot.route("demo.v1.Orders", "Place", Caller.INGRESS,
 *         snapshot.extractKey("demo.v1.Orders", "Place", request));
 * }</pre>
 *
 * <p>Parsing accepts both the lowerCamelCase JSON names and the {@code .proto} names of fields and
 * rejects unknown fields; printing writes lowerCamelCase names and leaves out fields at their
 * default, as protobuf's JSON mapping does. An error names the path of the field at fault, e.g.
 * {@code order.items[2].quantity} or {@code order.attributes["color"]}.
 *
 * <p>Immutable and thread-safe; it holds only the {@link ProtoSymbols} it was made over (a pinned
 * snapshot keeps answering from that snapshot; the resolver's live view from the current one).
 */
public final class ProtoJsonMappers implements JsonMappers {

    private final BiFunction<String, String, Optional<MethodDescriptor>> methods;
    private final String source;

    private ProtoJsonMappers(BiFunction<String, String, Optional<MethodDescriptor>> methods, String source) {
        this.methods = methods;
        this.source = source;
    }

    /** Mappers over a snapshot's schemas: {@code over(snapshot.symbols())}. */
    public static ProtoJsonMappers over(FleetSnapshot snapshot) {
        return over(snapshot.symbols());
    }

    /**
     * Mappers over {@code symbols}: a method's messages as the newest compatible version that
     * defines it has them (see {@link ProtoSymbols#method}).
     */
    public static ProtoJsonMappers over(ProtoSymbols symbols) {
        Objects.requireNonNull(symbols, "symbols");
        return new ProtoJsonMappers(symbols::method, "no compatible worker's schema defines it");
    }

    /** Mappers over one version's schema (see {@link ProtoSymbols#forVersion}), for work bound to one worker. */
    public static ProtoJsonMappers over(ProtoSchema schema) {
        Objects.requireNonNull(schema, "schema");
        return new ProtoJsonMappers(schema::method, "the schema does not define it");
    }

    @Override
    public byte[] requestFromJson(String service, String method, String json) {
        return fromJson(service, method, json, true);
    }

    @Override
    public String requestToJson(String service, String method, byte[] request) {
        return toJson(service, method, request, true);
    }

    @Override
    public byte[] responseFromJson(String service, String method, String json) {
        return fromJson(service, method, json, false);
    }

    @Override
    public String responseToJson(String service, String method, byte[] response) {
        return toJson(service, method, response, false);
    }

    private Descriptor type(String service, String method, boolean request) {
        MethodDescriptor m = methods.apply(service, method).orElseThrow(() -> new JsonMappingException(
                Reason.UNKNOWN_METHOD, service, method, "",
                "cannot map JSON for " + service + "/" + method + ": " + source, null));
        return request ? m.getInputType() : m.getOutputType();
    }

    private byte[] fromJson(String service, String method, String json, boolean request) {
        Objects.requireNonNull(json, "json");
        Descriptor type = type(service, method, request);
        String what = (request ? "request" : "response") + " of " + service + "/" + method;
        JsonElement tree;
        try {
            tree = JsonParser.parseString(json);
        } catch (JsonParseException e) {
            throw new JsonMappingException(Reason.MALFORMED_JSON, service, method, "",
                    "the " + what + " is not valid JSON: " + e.getMessage(), e);
        }
        if (!tree.isJsonObject()) {
            throw new JsonMappingException(Reason.MALFORMED_JSON, service, method, "",
                    "the " + what + " must be a JSON object, not " + kind(tree), null);
        }
        DynamicMessage.Builder builder = DynamicMessage.newBuilder(type);
        try {
            parser(type).merge(json, builder);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            Fault fault = locate(type, tree.getAsJsonObject(), "");
            String path = fault == null ? "" : fault.path();
            String reason = fault == null || fault.reason() == null ? e.getMessage() : fault.reason();
            throw new JsonMappingException(Reason.BAD_FIELD, service, method, path,
                    "the " + what + " does not match " + type.getFullName()
                            + (path.isEmpty() ? "" : " at field " + path) + ": " + reason, e);
        }
        return builder.build().toByteArray();
    }

    private String toJson(String service, String method, byte[] bytes, boolean request) {
        Objects.requireNonNull(bytes, "bytes");
        Descriptor type = type(service, method, request);
        try {
            return JsonFormat.printer().usingTypeRegistry(registry(type))
                    .print(DynamicMessage.parseFrom(type, bytes));
        } catch (InvalidProtocolBufferException e) {
            throw new JsonMappingException(Reason.UNPARSABLE_MESSAGE, service, method, "",
                    "the " + (request ? "request" : "response") + " of " + service + "/" + method
                            + " is not a " + type.getFullName() + ": " + e.getMessage(), e);
        }
    }

    private static JsonFormat.TypeRegistry registry(Descriptor type) {
        return JsonFormat.TypeRegistry.newBuilder().add(type).build();
    }

    private static JsonFormat.Parser parser(Descriptor type) {
        return JsonFormat.parser().usingTypeRegistry(registry(type));
    }

    /** Where a JSON value does not fit, and why when JsonFormat's own words are not the best ones. */
    private record Fault(String path, String reason) {
    }

    /**
     * Finds the first field of {@code object} that does not parse, by parsing each field on its own
     * with JsonFormat (so the rules are exactly JsonFormat's) and descending into the one that fails.
     * Null when every field parses alone (then the fault is in their combination, e.g. two members of
     * one oneof).
     */
    private static Fault locate(Descriptor type, JsonObject object, String path) {
        for (Map.Entry<String, JsonElement> member : object.entrySet()) {
            String name = member.getKey();
            String at = path.isEmpty() ? name : path + "." + name;
            FieldDescriptor field = type.findFieldByName(name);
            if (field == null) {
                field = type.getFields().stream().filter(f -> f.getJsonName().equals(name)).findFirst().orElse(null);
            }
            if (field == null) {
                return new Fault(at, type.getFullName() + " has no field '" + name + "'");
            }
            JsonElement value = member.getValue();
            String error = tryParse(type, name, value);
            if (error == null) {
                continue;
            }
            if (field.isMapField() && value.isJsonObject()) {
                FieldDescriptor valueField = field.getMessageType().findFieldByName("value");
                for (Map.Entry<String, JsonElement> entry : value.getAsJsonObject().entrySet()) {
                    JsonObject one = new JsonObject();
                    one.add(entry.getKey(), entry.getValue());
                    String entryError = tryParse(type, name, one);
                    if (entryError != null) {
                        String entryAt = at + "[\"" + entry.getKey() + "\"]";
                        return descend(valueField, entry.getValue(), entryAt, entryError);
                    }
                }
            } else if (field.isRepeated() && value.isJsonArray()) {
                JsonArray array = value.getAsJsonArray();
                for (int i = 0; i < array.size(); i++) {
                    JsonArray one = new JsonArray();
                    one.add(array.get(i));
                    String elementError = tryParse(type, name, one);
                    if (elementError != null) {
                        return descend(field, array.get(i), at + "[" + i + "]", elementError);
                    }
                }
            } else if (!field.isRepeated()) {
                return descend(field, value, at, error);
            }
            return new Fault(at, error);
        }
        return null;
    }

    /** Into a message value, or the fault is this value itself. */
    private static Fault descend(FieldDescriptor field, JsonElement value, String at, String error) {
        if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && value.isJsonObject()
                && !field.getMessageType().getFullName().startsWith("google.protobuf.")) {
            Fault inner = locate(field.getMessageType(), value.getAsJsonObject(), at);
            if (inner != null) {
                return inner;
            }
        }
        return new Fault(at, error);
    }

    /** JsonFormat's complaint about {@code {name: value}} alone in a {@code type}, or null when it parses. */
    private static String tryParse(Descriptor type, String name, JsonElement value) {
        JsonObject alone = new JsonObject();
        alone.add(name, value);
        try {
            parser(type).merge(alone.toString(), DynamicMessage.newBuilder(type));
            return null;
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            return e.getMessage();
        }
    }

    private static String kind(JsonElement e) {
        if (e.isJsonArray()) {
            return "an array";
        }
        if (e.isJsonNull()) {
            return "null";
        }
        return "a " + (e.getAsJsonPrimitive().isString() ? "string" : e.getAsJsonPrimitive().isNumber() ? "number"
                : "boolean");
    }

    @Override
    public String toString() {
        return "ProtoJsonMappers";
    }
}
