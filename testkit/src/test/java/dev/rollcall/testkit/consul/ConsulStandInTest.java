package dev.rollcall.testkit.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The stand-in speaks Consul's HTTP API the way the Consul docs describe it. */
class ConsulStandInTest {

    private final HttpClient http = HttpClient.newHttpClient();
    private ConsulStandIn consul;

    @AfterEach
    void close() {
        if (consul != null) {
            consul.close();
        }
    }

    private HttpResponse<String> send(String method, String path, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(consul.address() + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("X-Consul-Token", token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> put(String path, String body) throws Exception {
        return send("PUT", path, body, null);
    }

    private static long index(HttpResponse<?> r) {
        return Long.parseLong(r.headers().firstValue("X-Consul-Index").orElseThrow());
    }

    @Test
    void answersHealthQueriesInConsulsShapeWithAnIndex() throws Exception {
        consul = ConsulStandIn.builder().nodeName("n1").nodeMeta(java.util.Map.of("zone", "eu")).start();
        assertThat(put("/v1/agent/service/register", """
                {"ID":"w-1","Name":"workers","Tags":["a"],"Address":"10.0.0.1","Port":7001,"Meta":{"k":"v"},
                 "Check":{"TTL":"30s","Status":"passing","DeregisterCriticalServiceAfter":"1m"}}""").statusCode())
                .isEqualTo(200);

        HttpResponse<String> r = send("GET", "/v1/health/service/workers?passing", null, null);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(index(r)).isEqualTo(consul.index());
        JsonObject entry = JsonParser.parseString(r.body()).getAsJsonArray().get(0).getAsJsonObject();
        assertThat(entry.getAsJsonObject("Node").get("Node").getAsString()).isEqualTo("n1");
        assertThat(entry.getAsJsonObject("Node").get("Datacenter").getAsString()).isEqualTo("dc1");
        assertThat(entry.getAsJsonObject("Node").getAsJsonObject("Meta").get("zone").getAsString()).isEqualTo("eu");
        JsonObject service = entry.getAsJsonObject("Service");
        assertThat(service.get("ID").getAsString()).isEqualTo("w-1");
        assertThat(service.get("Service").getAsString()).isEqualTo("workers");
        assertThat(service.get("Port").getAsInt()).isEqualTo(7001);
        assertThat(service.getAsJsonArray("Tags").get(0).getAsString()).isEqualTo("a");
        JsonArray checks = entry.getAsJsonArray("Checks");
        assertThat(checks.get(0).getAsJsonObject().get("CheckID").getAsString()).isEqualTo("serfHealth");
        assertThat(checks.get(1).getAsJsonObject().get("CheckID").getAsString()).isEqualTo("service:w-1");
        assertThat(checks.get(1).getAsJsonObject().get("Status").getAsString()).isEqualTo("passing");
    }

    @Test
    void aBlockingQueryAnswersWhenTheServiceChangesOrWhenItsWaitRunsOut() throws Exception {
        consul = ConsulStandIn.start();
        put("/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001}");
        long index = index(send("GET", "/v1/health/service/workers", null, null));

        CompletableFuture<HttpResponse<String>> blocked = http.sendAsync(HttpRequest.newBuilder(
                URI.create(consul.address() + "/v1/health/service/workers?index=" + index + "&wait=60s")).build(),
                HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(10)).until(() -> consul.healthQueries("workers") == 2);
        assertThat(blocked).isNotDone();
        put("/v1/agent/service/register", "{\"ID\":\"w-2\",\"Name\":\"workers\",\"Port\":7002}");
        HttpResponse<String> changed = blocked.get();
        assertThat(index(changed)).isGreaterThan(index);
        assertThat(JsonParser.parseString(changed.body()).getAsJsonArray()).hasSize(2);

        // Nothing changes: the answer comes when wait (plus jitter) has passed, with the same index.
        HttpResponse<String> timedOut = send("GET", "/v1/health/service/workers?index=" + index(changed) + "&wait=1s",
                null, null);
        assertThat(index(timedOut)).isEqualTo(index(changed));
    }

    @Test
    void aTtlCheckNotUpdatedTurnsCriticalAndTheServiceIsReaped() throws Exception {
        consul = ConsulStandIn.start();
        put("/v1/agent/service/register", """
                {"ID":"w-1","Name":"workers","Port":7001,
                 "Check":{"TTL":"500ms","Status":"passing","deregister_critical_service_after":"1s"}}""");
        assertThat(consul.checkStatus("service:w-1")).contains("passing");

        await().atMost(Duration.ofSeconds(5)).until(() -> consul.checkStatus("service:w-1").equals(Optional.of("critical")));
        assertThat(JsonParser.parseString(send("GET", "/v1/health/service/workers?passing=true", null, null).body())
                .getAsJsonArray()).isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> consul.services().isEmpty());
        assertThat(put("/v1/agent/check/pass/service:w-1", "").statusCode()).isEqualTo(404);
    }

    @Test
    void checkUpdatesChangeTheStatusAndUnknownChecksGet404() throws Exception {
        consul = ConsulStandIn.start();
        put("/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001,\"Check\":{\"TTL\":\"30s\"}}");
        assertThat(consul.checkStatus("service:w-1")).as("TTL checks start critical").contains("critical");

        put("/v1/agent/check/pass/service:w-1?note=ok", "");
        assertThat(consul.checkStatus("service:w-1")).contains("passing");
        put("/v1/agent/check/warn/service:w-1", "");
        assertThat(consul.checkStatus("service:w-1")).contains("warning");
        put("/v1/agent/check/update/service:w-1", "{\"Status\":\"critical\",\"Output\":\"disk full\"}");
        assertThat(consul.checkStatus("service:w-1")).contains("critical");
        assertThat(put("/v1/agent/check/update/service:w-1", "{\"Status\":\"sick\"}").statusCode()).isEqualTo(400);
        HttpResponse<String> unknown = put("/v1/agent/check/fail/service:nope", "");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("Unknown check ID");
        assertThat(put("/v1/agent/service/deregister/nope", "").statusCode())
                .as("deregistering an unknown service is a no-op in Consul").isEqualTo(200);
        assertThat(put("/v1/agent/service/register", "{\"ID\":\"x\",\"Name\":\"w\",\"Check\":{\"HTTP\":\"http://x\"}}")
                .statusCode()).as("only TTL checks").isEqualTo(400);
    }

    @Test
    void anUnknownTokenIsRefusedAndAnAnonymousReadIsFilteredSilently() throws Exception {
        consul = ConsulStandIn.builder().aclToken("secret").start();
        send("PUT", "/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001}", "secret");

        HttpResponse<String> none = send("GET", "/v1/health/service/workers", null, null);
        HttpResponse<String> wrong = send("GET", "/v1/health/service/workers", null, "guess");
        HttpResponse<String> right = send("GET", "/v1/health/service/workers", null, "secret");
        HttpResponse<String> inUrl = send("GET", "/v1/health/service/workers?token=secret", null, null);

        assertThat(none.statusCode()).as("Consul filters reads, it does not refuse them").isEqualTo(200);
        assertThat(JsonParser.parseString(none.body()).getAsJsonArray()).isEmpty();
        assertThat(none.headers().firstValue(ConsulStandIn.RESULTS_FILTERED_HEADER))
                .as("masked for anonymous requests").isEmpty();
        assertThat(JsonParser.parseString(right.body()).getAsJsonArray()).hasSize(1);
        assertThat(wrong.statusCode()).isEqualTo(403);
        assertThat(wrong.body()).isEqualTo("ACL not found");
        assertThat(right.statusCode()).isEqualTo(200);
        assertThat(inUrl.statusCode()).isEqualTo(200);
        assertThat(consul.tokensSeen()).containsExactly("secret", "guess");
        assertThat(consul.requests().get(4).tokenInUrl()).isTrue();
        assertThat(consul.requests().get(4).toString()).doesNotContain("secret");
    }

    /** The README's policies, verbatim: a coordinator's reads everything it needs, a worker's registers and heartbeats. */
    static final String COORDINATOR_POLICY = """
            service "workers" { policy = "read" }
            node_prefix "" { policy = "read" }
            """;
    static final String WORKER_POLICY = """
            service "workers" { policy = "write" }
            node_prefix "" { policy = "write" }
            """;

    @Test
    void aclPoliciesFilterReadsAndRefuseWritesPerRule() throws Exception {
        consul = ConsulStandIn.builder().nodeName("n1")
                .aclPolicy("coordinator", COORDINATOR_POLICY)
                .aclPolicy("worker", WORKER_POLICY)
                .aclPolicy("service-only", "service \"workers\" { policy = \"read\" }")
                .aclPolicy("no-node-write", "service \"workers\" { policy = \"write\" }\nnode_prefix \"\" { policy = \"read\" }")
                .aclPolicy("other-node", "service_prefix \"\" { policy = \"read\" }\nnode \"n2\" { policy = \"read\" }")
                .start();
        String registration = "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001,"
                + "\"Check\":{\"CheckID\":\"w-1-ttl\",\"TTL\":\"30s\"}}";

        HttpResponse<String> byCoordinator = send("PUT", "/v1/agent/service/register", registration, "coordinator");
        assertThat(byCoordinator.statusCode()).isEqualTo(403);
        assertThat(byCoordinator.body()).startsWith("Permission denied: token with AccessorID '")
                .contains("lacks permission 'service:write' on \"workers\"").doesNotContain("coordinator");
        assertThat(send("PUT", "/v1/agent/service/register", registration, "worker").statusCode()).isEqualTo(200);
        assertThat(send("PUT", "/v1/agent/check/pass/w-1-ttl", "", "no-node-write").body())
                .contains("lacks permission 'node:write' on \"n1\"");
        assertThat(send("PUT", "/v1/agent/check/pass/w-1-ttl", "", "worker").statusCode()).isEqualTo(200);

        HttpResponse<String> full = send("GET", "/v1/health/service/workers", null, "coordinator");
        assertThat(JsonParser.parseString(full.body()).getAsJsonArray()).hasSize(1);
        assertThat(full.headers().firstValue(ConsulStandIn.RESULTS_FILTERED_HEADER)).isEmpty();
        for (String underPrivileged : new String[] {"service-only", "other-node"}) {
            HttpResponse<String> r = send("GET", "/v1/health/service/workers", null, underPrivileged);
            assertThat(r.statusCode()).as(underPrivileged).isEqualTo(200);
            assertThat(JsonParser.parseString(r.body()).getAsJsonArray()).as(underPrivileged).isEmpty();
            assertThat(r.headers().firstValue(ConsulStandIn.RESULTS_FILTERED_HEADER)).as(underPrivileged)
                    .contains("true");
        }
        assertThat(send("PUT", "/v1/agent/service/deregister/w-1", "", "coordinator").statusCode()).isEqualTo(403);
        assertThat(send("PUT", "/v1/agent/service/deregister/w-1", "", "worker").statusCode()).isEqualTo(200);
    }

    @Test
    void nodeChecksAreReportedAndPassingAsksThemToo() throws Exception {
        consul = ConsulStandIn.builder().nodeName("n1").start();
        put("/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001}");
        long before = index(send("GET", "/v1/health/service/workers", null, null));

        assertThat(put("/v1/agent/maintenance?enable=true&reason=patching", "").statusCode()).isEqualTo(200);
        HttpResponse<String> all = send("GET", "/v1/health/service/workers", null, null);
        assertThat(index(all)).as("a node check change moves the service's index").isGreaterThan(before);
        JsonArray checks = JsonParser.parseString(all.body()).getAsJsonArray().get(0).getAsJsonObject()
                .getAsJsonArray("Checks");
        JsonObject maintenance = checks.get(1).getAsJsonObject();
        assertThat(maintenance.get("CheckID").getAsString()).isEqualTo("_node_maintenance");
        assertThat(maintenance.get("Status").getAsString()).isEqualTo("critical");
        assertThat(maintenance.get("Notes").getAsString()).isEqualTo("patching");
        assertThat(maintenance.get("ServiceID").getAsString()).isEmpty();
        assertThat(JsonParser.parseString(send("GET", "/v1/health/service/workers?passing", null, null).body())
                .getAsJsonArray()).isEmpty();

        put("/v1/agent/maintenance?enable=false", "");
        consul.setNodeAlive(false);
        JsonObject serf = JsonParser.parseString(send("GET", "/v1/health/service/workers", null, null).body())
                .getAsJsonArray().get(0).getAsJsonObject().getAsJsonArray("Checks").get(0).getAsJsonObject();
        assertThat(serf.get("CheckID").getAsString()).isEqualTo("serfHealth");
        assertThat(serf.get("Status").getAsString()).isEqualTo("critical");
        assertThat(JsonParser.parseString(send("GET", "/v1/health/service/workers?passing", null, null).body())
                .getAsJsonArray()).isEmpty();
        consul.setNodeAlive(true);
        assertThat(JsonParser.parseString(send("GET", "/v1/health/service/workers?passing", null, null).body())
                .getAsJsonArray()).hasSize(1);
    }

    private JsonArray healthWith(String query) throws Exception {
        HttpResponse<String> r = send("GET", "/v1/health/service/workers?" + query, null, null);
        assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(200);
        return JsonParser.parseString(r.body()).getAsJsonArray();
    }

    private static String encode(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void filtersWithConsulsExpressionLanguageAndRefusesABadExpression() throws Exception {
        consul = ConsulStandIn.builder().nodeMeta(java.util.Map.of("rack", "r7")).start();
        put("/v1/agent/service/register", "{\"ID\":\"a\",\"Name\":\"workers\",\"Port\":7001,\"Tags\":[\"prod\"],"
                + "\"Meta\":{\"zone\":\"eu-1\"}}");
        put("/v1/agent/service/register", "{\"ID\":\"b\",\"Name\":\"workers\",\"Port\":7002,\"Tags\":[\"canary\"],"
                + "\"Meta\":{\"zone\":\"eu-2\"}}");

        assertThat(healthWith("filter=" + encode("Service.Meta.zone == \"eu-1\""))).hasSize(1);
        assertThat(healthWith("filter=" + encode("\"prod\" in Service.Tags or Service.Port == 7002"))).hasSize(2);
        assertThat(healthWith("filter=" + encode("Service.Tags not contains prod and Node.Meta[\"rack\"] == r7")))
                .hasSize(1);
        assertThat(healthWith("filter=" + encode("not (Service.ID matches \"^a\") and Service.Meta is not empty")))
                .hasSize(1);
        HttpResponse<String> bad = send("GET", "/v1/health/service/workers?filter=" + encode("Service.Nope == 1"), null, null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).startsWith("Failed to create boolean expression evaluator");

        assertThat(healthWith("stale")).hasSize(2);
        assertThat(healthWith("consistent")).hasSize(2);
        assertThat(send("GET", "/v1/health/service/workers?stale&consistent", null, null).statusCode()).isEqualTo(400);
    }

    @Test
    void comesBackOnTheSamePortWithItsStateAfterAStop() throws Exception {
        consul = ConsulStandIn.start();
        put("/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001}");
        int port = consul.port();
        long index = consul.index();

        consul.stop();
        assertThat(consul.isRunning()).isFalse();
        try {
            send("GET", "/v1/health/service/workers", null, null);
            throw new AssertionError("a stopped stand-in answered");
        } catch (IOException expected) {
            // connection refused
        }
        consul.restart();

        assertThat(consul.port()).isEqualTo(port);
        HttpResponse<String> r = send("GET", "/v1/health/service/workers", null, null);
        assertThat(index(r)).isEqualTo(index);
        assertThat(JsonParser.parseString(r.body()).getAsJsonArray()).hasSize(1);
    }

    @Test
    void rewindsTheIndexAndServesInjectedRawEntries() throws Exception {
        consul = ConsulStandIn.start();
        put("/v1/agent/service/register", "{\"ID\":\"w-1\",\"Name\":\"workers\",\"Port\":7001}");
        consul.rewindIndex(0);
        assertThat(index(send("GET", "/v1/health/service/workers", null, null))).isZero();

        consul.injectRawInstance("workers", "{\"Service\":{\"ID\":\"raw\",\"Port\":\"x\"}}");

        HttpResponse<String> r = send("GET", "/v1/health/service/workers", null, null);
        assertThat(index(r)).isEqualTo(1);
        assertThat(r.body()).endsWith(",{\"Service\":{\"ID\":\"raw\",\"Port\":\"x\"}}]");
    }
}
