package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code /api/fleet} and the console's HTTP rules, over a real loopback fleet, without a browser. */
class ConsoleFleetJsonTest {

    @AutoClose
    final Closer closer = new Closer();

    private RollcallConsole console(ConsoleFleet f) {
        return closer.add(RollcallConsole.serve(f.resolver, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
    }

    @Test
    void fleetJsonWithRequireIsTheSnapshotAQueryWithThoseRequirementsGetsAndSaysWhatEachOtherWorkerLacks() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1.4.0"), "1.4.0");
        RollcallWorker geo = f.addCapable("1.4.0", "udf:geo_distance", "plan-protocol=3");
        RollcallWorker old = f.addCapable("2.0.0", "udf:geo_distance");
        f.await(s -> s.counts().compatible() == 2 && s.counts().rejected() == 1);
        RollcallConsole console = console(f);
        String plainUrl = f.worker(0).endpoint().url();

        JsonNode narrowed = ConsoleFleet.parse(f.get(console, "/api/fleet?require=udf:geo_distance").body());
        assertThat(narrowed.get("requirements").toString()).isEqualTo("[\"udf:geo_distance\"]");
        assertThat(narrowed.get("snapshot").asLong()).isEqualTo(f.resolver.pin().number());
        assertThat(narrowed.get("counts").get("compatible").asInt()).isEqualTo(1);
        assertThat(narrowed.get("counts").get("lacksRequirement").asInt()).isEqualTo(1);
        JsonNode plain = ConsoleFleet.workerIn(narrowed, plainUrl);
        assertThat(plain.get("state").asText()).isEqualTo("lacks_requirement");
        assertThat(plain.get("status").asText()).isEqualTo("lacks what the query requires");
        assertThat(plain.get("reason").asText()).isEqualTo("lacks udf:geo_distance");
        assertThat(ConsoleFleet.workerIn(narrowed, geo.endpoint().url()).get("capabilities").toString())
                .isEqualTo("[\"plan-protocol=3\",\"udf:geo_distance\"]");
        assertThat(ConsoleFleet.workerIn(narrowed, old.endpoint().url()).get("state").asText())
                .as("the policy decides first").isEqualTo("rejected");

        JsonNode ranged = ConsoleFleet.parse(f.get(console, "/api/fleet?require=plan-protocol%3E%3D3&require=udf:geo_distance")
                .body());
        assertThat(ranged.get("requirements").toString()).isEqualTo("[\"plan-protocol>=3\",\"udf:geo_distance\"]");
        assertThat(ConsoleFleet.workerIn(ranged, plainUrl).get("reason").asText())
                .isEqualTo("lacks plan-protocol>=3");

        JsonNode whole = f.fleetJson(console);
        assertThat(whole.get("requirements")).isEmpty();
        assertThat(whole.get("counts").get("lacksRequirement").asInt()).isZero();
        assertThat(ConsoleFleet.workerIn(whole, plainUrl).get("state").asText()).isEqualTo("compatible");
        assertThat(ConsoleFleet.workerIn(whole, plainUrl).get("capabilities")).isEmpty();
        assertThat(ConsoleFleet.workerIn(whole, geo.endpoint().url()).get("capabilities")).hasSize(2);
    }

    @Test
    void aMalformedRequireIsA400NamingItEscapedAndTheNextRequestIsAnswered() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1.4.0"), "1.4.0");
        f.await(s -> s.counts().compatible() == 1);
        RollcallConsole console = console(f);

        HttpResponse<String> banana = f.get(console, "/api/fleet?require=plan-protocol%3E%3Dbanana");
        assertThat(banana.statusCode()).isEqualTo(400);
        assertThat(banana.body()).startsWith("require: requirement 'plan-protocol>=banana'");

        HttpResponse<String> hostile = f.get(console, "/api/fleet?require=udf:x%0A%5Bmain%5D%20INFO%20forged%1B%5B31m%00");
        assertThat(hostile.statusCode()).isEqualTo(400);
        assertThat(hostile.body()).startsWith("require: requirement 'udf:x").contains("\\u001b")
                .doesNotContain("\u001b").doesNotContain("\n[main]").doesNotContain("\u0000");

        HttpResponse<String> tooMany = f.get(console, "/api/fleet?require=" + "a,".repeat(32) + "a");
        assertThat(tooMany.statusCode()).isEqualTo(400);
        assertThat(tooMany.body()).contains("33 requirements (at most 32)");

        try (Socket s = new Socket()) { // a request line no URI class would write
            s.connect(console.address(), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /api/fleet?require=%zz HTTP/1.1\r\nHost: " + ConsoleHandler.authority(console.address())
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 400 Bad Request")
                    .endsWith("\r\n\r\nrequire: the query is not percent-encoded as a URL's must be\n");
        }

        assertThat(f.fleetJson(console).get("workers")).hasSize(1);
    }

    @Test
    void fleetJsonListsEveryCandidateWithVersionStateAndReason() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1.4.0"), "1.4.0", "1.4.2", "2.0.0");
        WorkerEndpoint nobody = f.addNobody();
        f.await(s -> s.counts().compatible() == 2 && s.counts().rejected() == 1 && s.counts().unreachable() == 1);
        RollcallConsole console = console(f);

        JsonNode fleet = f.fleetJson(console);

        assertThat(fleet.get("resolver").asText()).isEqualTo("console-test");
        assertThat(fleet.get("snapshot").asLong()).isEqualTo(f.resolver.pin().number());
        assertThat(fleet.get("policy").asText()).isEqualTo(f.resolver.pin().policy());
        assertThat(fleet.get("counts").get("candidates").asInt()).isEqualTo(4);
        assertThat(fleet.get("workers")).hasSize(4);
        JsonNode rejected = ConsoleFleet.workerIn(fleet, f.worker(2).endpoint().url());
        assertThat(rejected.get("version").asText()).isEqualTo("2.0.0");
        assertThat(rejected.get("state").asText()).isEqualTo("rejected");
        assertThat(rejected.get("reason").asText()).contains("2.0.0").contains("^1.4.0");
        JsonNode ok = ConsoleFleet.workerIn(fleet, f.worker(1).endpoint().url());
        assertThat(ok.get("state").asText()).isEqualTo("compatible");
        assertThat(ok.get("instance").asText()).isEqualTo(f.worker(1).instanceId());
        assertThat(ok.get("reason").asText()).isEmpty();
        JsonNode down = ConsoleFleet.workerIn(fleet, nobody.url());
        assertThat(down.get("state").asText()).isEqualTo("unreachable");
        assertThat(down.get("version").isNull()).isTrue();
        assertThat(down.get("reason").asText()).isNotEmpty();
        assertThat(fleet.get("versions").toString()).contains("{\"version\":\"1.4.0\",\"workers\":1,\"compatible\":1}")
                .contains("{\"version\":\"2.0.0\",\"workers\":1,\"compatible\":0}");
        assertThat(fleet.get("discovery").get("description").asText()).isEqualTo("push (console test)");
        assertThat(fleet.get("discovery").get("staleSince").isNull()).isTrue();
    }

    @Test
    void aDrainShowsUpWithItsStartAndInTheTimeline() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0", "1.0.0");
        f.awaitSettled(2);
        RollcallConsole console = console(f);

        f.worker(0).drain();
        long drained = f.await(s -> s.status(f.worker(0).endpoint().url())
                .map(st -> st.state() == State.DRAINING).orElse(false)).number();

        JsonNode fleet = awaitDocument(f, console, drained);
        JsonNode w = ConsoleFleet.workerIn(fleet, f.worker(0).endpoint().url());
        assertThat(w.get("state").asText()).isEqualTo("draining");
        assertThat(w.get("drainingSince").isNull()).as("drainingSince of %s", w).isFalse();
        assertThat(w.get("holders").asInt()).as("holders of %s: the console's resolver holds nothing", w).isZero();
        assertThat(w.get("holders").isNumber()).as("holders of %s", w).isTrue();
        assertThat(ConsoleFleet.workerIn(fleet, f.worker(1).endpoint().url()).get("holders").isNull())
                .as("a serving worker has no count").isTrue();
        assertThat(fleet.get("counts").get("draining").asInt()).isEqualTo(1);
        assertThat(fleet.get("timeline").toString()).contains("draining " + f.worker(0).endpoint().url());
    }

    @Test
    void discoveryFailureShowsAsStaleWithItsProblem() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        f.awaitSettled(1);
        RollcallConsole console = console(f);

        f.discovery.fail(new IllegalStateException("the registry is down"));
        long stale = f.await(s -> s.staleSince().isPresent()).number();

        JsonNode discovery = awaitDocument(f, console, stale).get("discovery");
        assertThat(discovery.get("staleSince").isNull()).isFalse();
        assertThat(discovery.get("problem").asText()).contains("the registry is down");
    }

    @Test
    void peerTextReachesTheBrowserAsDataOnly() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        String hostile = "<img src=x onerror=alert(1)>\u2028\u202e&\"\\\u0007";
        f.label(0, Map.of("zone", hostile, "note", "</script><script>alert(2)</script>"));
        f.await(s -> s.statuses().stream().anyMatch(st -> st.endpoint().labels().containsKey("zone"))
                && s.counts().pending() == 0);
        RollcallConsole console = console(f);

        String body = f.get(console, "/api/fleet").body();

        assertThat(body).doesNotContain("<", ">", "&", "\u2028", "\u202e", "\u0007");
        JsonNode w = ConsoleFleet.workerIn(ConsoleFleet.parse(body), f.worker(0).endpoint().url());
        assertThat(w.get("zone").asText()).isEqualTo(hostile); // escaped on the wire, the same text once parsed
        assertThat(w.get("labels").get("note").asText()).isEqualTo("</script><script>alert(2)</script>");
    }

    @Test
    void onlyGetAndHeadAreAnswered() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        RollcallConsole console = console(f);

        for (String method : new String[] {"POST", "PUT", "DELETE", "PATCH"}) {
            HttpResponse<String> r = f.send(console, HttpRequest.newBuilder(console.uri().resolve("/api/fleet"))
                    .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.ofString("{}")).build());
            assertThat(r.statusCode()).as(method).isEqualTo(405);
            assertThat(r.headers().firstValue("Allow")).hasValue("GET, HEAD");
            assertThat(r.body()).contains("read-only");
        }
        HttpResponse<String> head = f.send(console, HttpRequest.newBuilder(console.uri().resolve("/api/fleet"))
                .timeout(Duration.ofSeconds(10)).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        HttpResponse<String> page = f.get(console, "/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(csp ->
                assertThat(csp).contains("default-src 'none'", "script-src 'self'"));
        assertThat(page.body()).contains("<script src=\"console.js\"").doesNotContain("http://", "https://");
        assertThat(f.get(console, "/console.js").body()).doesNotContain("innerHTML", "http://", "https://");
        assertThat(f.get(console, "/nothing-here").statusCode()).isEqualTo(404);
    }

    @Test
    void aRequestForAnotherHostIsRefusedWhileOnLoopback() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        RollcallConsole console = console(f);

        // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1.
        try (Socket s = new Socket()) {
            s.connect(console.address(), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write("GET /api/fleet HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String status = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            assertThat(status).isEqualTo("HTTP/1.1 403 Forbidden");
        }
        assertThat(f.get(console, "/api/fleet").statusCode()).isEqualTo(200); // Host: 127.0.0.1:port
    }

    @Test
    void aNonLoopbackAddressIsRefusedWithoutTheKey() {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        InetSocketAddress everywhere = new InetSocketAddress(0);

        assertThatThrownBy(() -> RollcallConsole.serve(f.resolver, everywhere))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.console.allow-remote=true")
                .hasMessageContaining("0.0.0.0")
                .satisfies(e -> assertThat(((ConfigurationException) e).key()).isEqualTo("rollcall.console.allow-remote"));
        RollcallConfig no = RollcallConfig.of(Map.of("rollcall.console.allow-remote", "false"));
        assertThatThrownBy(() -> RollcallConsole.builder(f.resolver).config(no).address(everywhere).start())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.console.allow-remote");
    }

    @Test
    void consoleKeysAreTheConsolesAndATypoIsNamed() {
        RollcallConfig config = RollcallConfig.of(Map.of("rollcall.console.max-clients", "4",
                "rollcall.console.max-client", "4"));
        // The resolver leaves rollcall.console.* to the console...
        WorkerResolver resolver = closer.add(WorkerResolver.builder().config(config).discovery(new PushDiscovery())
                .policy(SemverRangePolicy.of("^1")).build());
        // ...which names its own unknown key.
        assertThatThrownBy(() -> RollcallConsole.builder(resolver).config(config))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.console.max-client ")
                .hasMessageContaining("rollcall.console.max-clients");
        assertThatThrownBy(() -> RollcallConsole.builder(resolver)
                .config(RollcallConfig.of(Map.of("rollcall.console.max-clients", "0"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.console.max-clients");
    }

    /** The console's document once it shows snapshot {@code number} or a later one. */
    static JsonNode awaitDocument(ConsoleFleet f, RollcallConsole console, long number) {
        AtomicReference<JsonNode> last = new AtomicReference<>();
        await().atMost(ConsoleFleet.WAIT).pollInterval(Duration.ofMillis(20))
                .alias("the console shows snapshot " + number + " (last " + last + ")")
                .until(() -> {
                    JsonNode doc = f.fleetJson(console);
                    last.set(doc);
                    return doc.get("snapshot").asLong() >= number && timelineHas(doc, number);
                });
        return last.get();
    }

    private static boolean timelineHas(JsonNode fleet, long number) {
        for (JsonNode e : fleet.get("timeline")) {
            if (e.get("snapshot").asLong() >= number) {
                return true;
            }
        }
        return false;
    }
}
