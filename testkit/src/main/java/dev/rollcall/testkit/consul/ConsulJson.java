package dev.rollcall.testkit.consul;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Reading request bodies the way Consul's Go decoder does, and writing Consul's JSON shapes. */
final class ConsulJson {

    private ConsulJson() {
    }

    static JsonObject parseObject(byte[] body) {
        try {
            JsonElement e = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
            if (!e.isJsonObject()) {
                throw new RequestRefused(400, "Request decode failed: expected a JSON object");
            }
            return e.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new RequestRefused(400, "Request decode failed: " + e.getMessage());
        }
    }

    /** A field by its Consul name, matched as Go's JSON decoder and Consul's key translation do. */
    static JsonElement field(JsonObject o, String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        for (Map.Entry<String, JsonElement> e : o.entrySet()) {
            if (e.getKey().replace("_", "").toLowerCase(Locale.ROOT).equals(wanted)) {
                return e.getValue();
            }
        }
        return null;
    }

    static String string(JsonObject o, String name) {
        JsonElement e = field(o, name);
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (e instanceof JsonPrimitive p) {
            return p.getAsString();
        }
        throw new RequestRefused(400, "Request decode failed: " + name + " must be a string");
    }

    static JsonArray stringList(List<String> items) {
        JsonArray a = new JsonArray();
        items.forEach(a::add);
        return a;
    }

    static JsonObject stringMap(Map<String, String> map) {
        JsonObject o = new JsonObject();
        new TreeMap<>(map).forEach(o::addProperty);
        return o;
    }

    /** A node-level check ({@code serfHealth}, {@code _node_maintenance}) as health entries list it. */
    static JsonObject nodeCheck(String node, String id, String name, String status, String notes, String output,
                                long createIndex, long modifyIndex) {
        JsonObject check = new JsonObject();
        check.addProperty("Node", node);
        check.addProperty("CheckID", id);
        check.addProperty("Name", name);
        check.addProperty("Status", status);
        check.addProperty("Notes", notes);
        check.addProperty("Output", output);
        check.addProperty("ServiceID", "");
        check.addProperty("ServiceName", "");
        check.add("ServiceTags", new JsonArray());
        check.addProperty("Type", "");
        check.addProperty("CreateIndex", createIndex);
        check.addProperty("ModifyIndex", modifyIndex);
        return check;
    }
}
