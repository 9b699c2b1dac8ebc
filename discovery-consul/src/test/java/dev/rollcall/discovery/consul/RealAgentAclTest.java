package dev.rollcall.discovery.consul;

import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.testkit.CandidateRecorder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Opt-in, against a real agent with ACLs on: runs only when {@code CONSUL_HTTP_ADDR} and
 * {@code CONSUL_HTTP_TOKEN} are set, the token being allowed to manage ACLs ({@code acl:write}, e.g.
 * the bootstrap token) and to register {@code rollcall-test-*} services. It creates a policy and a
 * token without {@code service:read} for the test's service, checks that the real agent filters
 * (200, {@code X-Consul-Results-Filtered-By-ACLs}) and that the backend reports it instead of an
 * empty set, and deletes what it created. The same behaviour is tested against the stand-in in
 * {@code ConsulWorkerDiscoveryTest}.
 */
@EnabledIfEnvironmentVariable(named = "CONSUL_HTTP_ADDR", matches = ".+")
@EnabledIfEnvironmentVariable(named = "CONSUL_HTTP_TOKEN", matches = ".+")
class RealAgentAclTest {

    private final String address = withScheme(System.getenv("CONSUL_HTTP_ADDR"));
    private final String management = System.getenv("CONSUL_HTTP_TOKEN") == null ? ""
            : System.getenv("CONSUL_HTTP_TOKEN").strip();
    private final String service = "rollcall-test-" + UUID.randomUUID().toString().substring(0, 8);
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> cleanUp = new ArrayList<>();     // paths to DELETE, newest last
    private TestAgent agent;
    private WorkerDiscovery discovery;

    @AfterEach
    void deleteWhatWasCreated() throws Exception {
        if (discovery != null) {
            discovery.close();
        }
        if (agent != null) {
            agent.deregisterAll();
        }
        for (int i = cleanUp.size() - 1; i >= 0; i--) {
            send("DELETE", cleanUp.get(i), null);
        }
    }

    @Test
    void aRealAgentFiltersTheReadAndTheBackendReportsItInsteadOfAnEmptySet() throws Exception {
        agent = new TestAgent(address, management);
        agent.register(service, service + "-a", "127.0.0.1", 7001);
        JsonObject policy = JsonParser.parseString(send("PUT", "/v1/acl/policy", "{\"Name\":\"" + service
                + "-nodes-only\",\"Rules\":\"node_prefix \\\"\\\" { policy = \\\"read\\\" }\"}")).getAsJsonObject();
        cleanUp.add("/v1/acl/policy/" + policy.get("ID").getAsString());
        JsonObject token = JsonParser.parseString(send("PUT", "/v1/acl/token", "{\"Description\":\"" + service
                + "\",\"Policies\":[{\"ID\":\"" + policy.get("ID").getAsString() + "\"}]}")).getAsJsonObject();
        cleanUp.add("/v1/acl/token/" + token.get("AccessorID").getAsString());
        String secret = token.get("SecretID").getAsString();

        Map<String, String> keys = new HashMap<>();
        keys.put(P + "address", address);
        keys.put(P + "service", service);
        keys.put(P + "token", secret);
        keys.put(P + "wait", "2s");
        keys.put(P + "backoff.initial", "100ms");
        keys.put(P + "backoff.max", "1s");
        discovery = new ConsulWorkerDiscoveryProvider().create(Settings.of(keys).scope(P));
        CandidateRecorder listener = new CandidateRecorder();
        discovery.start(listener);

        await().atMost(Duration.ofSeconds(20)).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0).getMessage()).contains("X-Consul-Results-Filtered-By-ACLs")
                .contains("service:read").doesNotContain(secret);
        assertThat(listener.sets()).isEmpty();
    }

    private String send(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(address + path)).timeout(Duration.ofSeconds(10))
                .header("X-Consul-Token", management)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(method + " " + path + " -> " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static String withScheme(String address) {
        return address == null ? "" : address.contains("://") ? address : "http://" + address;
    }
}
