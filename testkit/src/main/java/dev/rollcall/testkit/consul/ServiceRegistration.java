package dev.rollcall.testkit.consul;

import static dev.rollcall.testkit.consul.ConsulJson.field;
import static dev.rollcall.testkit.consul.ConsulJson.string;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The body of {@code PUT /v1/agent/service/register}, read and checked as Consul does (field names
 * in any case or in snake_case; TTL checks only, in {@code Check} or {@code Checks}).
 *
 * @param id      the service ID ({@code Name} when unset)
 * @param name    the service name
 * @param tags    its tags, in order
 * @param address its address, {@code ""} for the node's
 * @param port    its port, 0 when unset
 * @param meta    its service meta
 * @param checks  its checks, each with its ID (explicit, else Consul's {@code service:<id>[:n]})
 */
record ServiceRegistration(String id, String name, List<String> tags, String address, int port,
                           Map<String, String> meta, List<CheckDefinition> checks) {

    static final Set<String> STATUSES = Set.of("passing", "warning", "critical");
    private static final Pattern META_KEY = Pattern.compile("[A-Za-z0-9_-]{1,128}");

    /** One TTL check of a registration. */
    record CheckDefinition(String id, String name, Duration ttl, String status, String notes,
                           Duration deregisterAfter) {
    }

    /** @throws RequestRefused with Consul's status and message for a body it would refuse */
    static ServiceRegistration parse(byte[] body) {
        JsonObject o = ConsulJson.parseObject(body);
        String name = string(o, "Name");
        if (name == null || name.isEmpty()) {
            throw new RequestRefused(400, "Missing service name");
        }
        String id = Objects.requireNonNullElse(string(o, "ID"), name);
        List<String> tags = new ArrayList<>();
        JsonElement tagsJson = field(o, "Tags");
        if (tagsJson != null && tagsJson.isJsonArray()) {
            tagsJson.getAsJsonArray().forEach(t -> tags.add(t.getAsString()));
        }
        return new ServiceRegistration(id, name, tags, Objects.requireNonNullElse(string(o, "Address"), ""),
                port(o), meta(o), checks(o, id, name));
    }

    private static Map<String, String> meta(JsonObject o) {
        Map<String, String> meta = new LinkedHashMap<>();
        JsonElement metaJson = field(o, "Meta");
        if (metaJson != null && metaJson.isJsonObject()) {
            for (Map.Entry<String, JsonElement> e : metaJson.getAsJsonObject().entrySet()) {
                if (!META_KEY.matcher(e.getKey()).matches() || e.getKey().startsWith("consul-")) {
                    throw new RequestRefused(400,
                            "Invalid Service Meta: Key contains invalid characters or is reserved: " + e.getKey());
                }
                meta.put(e.getKey(), e.getValue().isJsonNull() ? "" : e.getValue().getAsString());
            }
        }
        return meta;
    }

    private static int port(JsonObject o) {
        JsonElement portJson = field(o, "Port");
        if (portJson == null || portJson.isJsonNull()) {
            return 0;
        }
        if (!portJson.isJsonPrimitive() || !portJson.getAsJsonPrimitive().isNumber()) {
            throw new RequestRefused(400, "Request decode failed: json: cannot unmarshal "
                    + (portJson.isJsonPrimitive() ? "string" : "object") + " into Go struct field Port of type int");
        }
        return portJson.getAsInt();
    }

    private static List<CheckDefinition> checks(JsonObject o, String id, String name) {
        List<JsonObject> defs = new ArrayList<>();
        JsonElement check = field(o, "Check");
        if (check != null && check.isJsonObject()) {
            defs.add(check.getAsJsonObject());
        }
        JsonElement more = field(o, "Checks");
        if (more != null && more.isJsonArray()) {
            more.getAsJsonArray().forEach(c -> defs.add(c.getAsJsonObject()));
        }
        List<CheckDefinition> checks = new ArrayList<>();
        for (int i = 0; i < defs.size(); i++) {
            JsonObject def = defs.get(i);
            Duration ttl = GoDuration.parse(string(def, "TTL"));
            if (ttl == null || ttl.isZero() || ttl.isNegative()) {
                throw new RequestRefused(400, "Invalid check: the Consul stand-in supports TTL checks only (TTL="
                        + string(def, "TTL") + ")");
            }
            String status = Objects.requireNonNullElse(string(def, "Status"), "critical");
            if (!STATUSES.contains(status)) {
                throw new RequestRefused(400, "Invalid check status: \"" + status + "\"");
            }
            String deregister = string(def, "DeregisterCriticalServiceAfter");
            Duration deregisterAfter = deregister == null ? null : GoDuration.parse(deregister);
            if (deregister != null && deregisterAfter == null) {
                throw new RequestRefused(400, "Invalid check: DeregisterCriticalServiceAfter '" + deregister + "'");
            }
            String checkId = string(def, "CheckID");
            if (checkId == null) {
                checkId = "service:" + id + (defs.size() > 1 ? ":" + (i + 1) : "");
            }
            checks.add(new CheckDefinition(checkId, Objects.requireNonNullElse(string(def, "Name"),
                    "Service '" + name + "' check"), ttl, status, Objects.requireNonNullElse(string(def, "Notes"), ""),
                    deregisterAfter));
        }
        return checks;
    }
}
