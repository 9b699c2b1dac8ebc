package dev.rollcall.discovery.consul;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What an operator or another tool does to the agent in a test, over its HTTP API (the JDK's
 * client, independent of the code under test): registers instances, fails and passes their TTL
 * checks, deregisters them. Works against {@link dev.rollcall.testkit.consul.ConsulStandIn} and a
 * real agent. {@link #deregisterAll()} cleans up what it registered.
 */
final class TestAgent {

    private final String address;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> registered = new ArrayList<>();

    TestAgent(String address, String token) {
        this.address = address.contains("://") ? address : "http://" + address;
        this.token = token;
    }

    /** Registers an instance; with {@code ttl} non-null it gets a TTL check in {@code status}. */
    void register(String service, String id, String host, int port, List<String> tags, Map<String, String> meta,
                  String ttl, String status) {
        StringBuilder json = new StringBuilder("{\"ID\":\"" + id + "\",\"Name\":\"" + service + "\"");
        if (host != null) {
            json.append(",\"Address\":\"").append(host).append('"');
        }
        json.append(",\"Port\":").append(port);
        json.append(",\"Tags\":[").append(tags.stream().map(t -> "\"" + t + "\"").collect(Collectors.joining(",")))
                .append(']');
        json.append(",\"Meta\":{").append(meta.entrySet().stream()
                .map(e -> "\"" + e.getKey() + "\":\"" + e.getValue() + "\"").collect(Collectors.joining(","))).append('}');
        if (ttl != null) {
            json.append(",\"Check\":{\"TTL\":\"").append(ttl).append("\",\"Status\":\"").append(status).append("\"}");
        }
        json.append('}');
        put("/v1/agent/service/register", json.toString());
        registered.add(id);
    }

    /** An instance without checks: always passing. */
    void register(String service, String id, String host, int port) {
        register(service, id, host, port, List.of(), Map.of(), null, null);
    }

    void fail(String checkId) {
        put("/v1/agent/check/fail/" + checkId, "");
    }

    void pass(String checkId) {
        put("/v1/agent/check/pass/" + checkId, "");
    }

    /** Node maintenance on the agent's node: Consul adds the critical node check {@code _node_maintenance}. */
    void nodeMaintenance(boolean enable) {
        put("/v1/agent/maintenance?enable=" + enable + "&reason=rollcall-test", "");
    }

    void deregister(String id) {
        put("/v1/agent/service/deregister/" + id, "");
        registered.remove(id);
    }

    /** Removes what this helper registered; ignores those already gone. */
    void deregisterAll() {
        for (String id : List.copyOf(registered)) {
            try {
                deregister(id);
            } catch (IllegalStateException e) {
                // already gone
            }
        }
    }

    private void put(String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(address + path))
                .timeout(Duration.ofSeconds(10))
                .PUT(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("X-Consul-Token", token);
        }
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("PUT " + path + " -> " + r.statusCode() + " " + r.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("PUT " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
