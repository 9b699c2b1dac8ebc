package dev.rollcall.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.Closer;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * A real loopback fleet, a resolver over it through {@link PushDiscovery}, and helpers to read a
 * console's JSON: what the console tests share. Everything goes through the {@link Closer}.
 */
final class ConsoleFleet {

    static final Duration WAIT = Duration.ofSeconds(20);
    static final ObjectMapper JSON = new ObjectMapper();

    final Closer closer;
    final WorkerFleet fleet;
    final PushDiscovery discovery = new PushDiscovery("push (console test)");
    final WorkerResolver resolver;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<WorkerEndpoint> extra = new ArrayList<>();
    private final Map<Integer, Map<String, String>> labels = new ConcurrentHashMap<>();

    ConsoleFleet(Closer closer, VersionPolicy policy, String... versions) {
        this.closer = closer;
        this.fleet = closer.add(WorkerFleet.start(versions));
        this.resolver = closer.add(WorkerResolver.builder().discovery(discovery).policy(policy)
                .backoff(Duration.ofMillis(50), Duration.ofSeconds(2)).name("console-test").build());
        push();
    }

    FleetWorker worker(int i) {
        return fleet.worker(i);
    }

    /** Adds a candidate that nothing listens on: it shows up unreachable. */
    WorkerEndpoint addNobody() {
        WorkerEndpoint nobody = WorkerFleet.freeEndpoint();
        extra.add(nobody);
        push();
        return nobody;
    }

    /** Starts a worker of {@code version} that says it can do {@code capabilities}; discovery lists it from now on. */
    RollcallWorker addCapable(String version, String... capabilities) {
        try {
            RollcallWorker w = closer.add(RollcallWorker.builder().version(version).capabilities(capabilities).start());
            extra.add(w.endpoint());
            push();
            return w;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Worker {@code i} is reported by discovery with {@code labels} from now on; pushes the set. */
    void label(int i, Map<String, String> workerLabels) {
        labels.put(i, Map.copyOf(workerLabels));
        push();
    }

    void push() {
        List<WorkerEndpoint> all = new ArrayList<>();
        for (int w = 0; w < fleet.workers().size(); w++) {
            WorkerEndpoint e = fleet.worker(w).endpoint();
            all.add(labels.containsKey(w) ? e.withLabels(labels.get(w)) : e);
        }
        all.addAll(extra);
        discovery.push(all);
    }

    FleetSnapshot await(Predicate<FleetSnapshot> condition) {
        try {
            return resolver.await(condition::test, WAIT);
        } catch (TimeoutException e) {
            throw new AssertionError("the resolver did not get there within " + WAIT + "; last " + resolver.pin()
                    + ": " + resolver.pin().statuses(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Every candidate has an answer (none pending). */
    FleetSnapshot awaitSettled(int candidates) {
        return await(s -> s.counts().candidates() == candidates && s.counts().pending() == 0);
    }

    HttpResponse<String> get(RollcallConsole console, String path) {
        return send(console, HttpRequest.newBuilder(console.uri().resolve(path)).timeout(Duration.ofSeconds(10))
                .GET().build());
    }

    HttpResponse<String> send(RollcallConsole console, HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    JsonNode fleetJson(RollcallConsole console) {
        HttpResponse<String> r = get(console, "/api/fleet");
        if (r.statusCode() != 200) {
            throw new AssertionError("/api/fleet answered " + r.statusCode() + ": " + r.body());
        }
        return parse(r.body());
    }

    static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + json, e);
        }
    }

    /** The worker of {@code url} in a fleet document. */
    static JsonNode workerIn(JsonNode fleet, String url) {
        for (JsonNode w : fleet.get("workers")) {
            if (w.get("endpoint").asText().equals(url)) {
                return w;
            }
        }
        throw new AssertionError(url + " is not in the document's workers: " + fleet.get("workers"));
    }

    static URI uri(RollcallConsole console, String path) {
        return console.uri().resolve(path);
    }
}
