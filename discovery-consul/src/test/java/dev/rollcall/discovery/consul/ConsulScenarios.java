package dev.rollcall.discovery.consul;

import dev.rollcall.testkit.CandidateRecorder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a user of the {@code consul} backend relies on, written once and run against the
 * {@link dev.rollcall.testkit.consul.ConsulStandIn stand-in} (always) and a real agent (when
 * {@code CONSUL_HTTP_ADDR} is set). Every test uses its own service name, so a shared agent is fine.
 */
abstract class ConsulScenarios {

    static final String P = "rollcall.discovery.consul.";
    static final Duration SEEN = Duration.ofSeconds(10);

    /** The agent, e.g. {@code http://127.0.0.1:8500}. */
    abstract String address();

    /** The ACL token, or null. */
    abstract String token();

    /** A {@code registration.deregister-after} the target honours (a real agent raises it to 1m). */
    abstract String deregisterAfter();

    protected final String service = "rollcall-test-" + UUID.randomUUID().toString().substring(0, 8);
    protected TestAgent agent;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** Prepares the target before each test (a stand-in starts; a real agent is there already). */
    void startTarget() {
    }

    /** Releases the target after everything else (a stand-in stops; a real agent stays). */
    void releaseTarget() {
    }

    @BeforeEach
    void connectAgent() {
        startTarget();
        agent = new TestAgent(address(), token());
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
            agent.deregisterAll();
        } finally {
            releaseTarget();
        }
    }

    /** The coordinator's and the worker's keys, in one map as in one properties file. */
    Map<String, String> keys(Map<String, String> extra) {
        Map<String, String> keys = new HashMap<>();
        keys.put(P + "address", address());
        keys.put(P + "service", service);
        if (token() != null) {
            keys.put(P + "token", token());
        }
        keys.put(P + "wait", "2s");
        keys.put(P + "backoff.initial", "100ms");
        // The scenarios change the service faster than the default 15 s rate limit allows; burst 2 is kept.
        keys.put(P + "rate-limit.interval", "100ms");
        keys.put(P + "backoff.max", "1s");
        extra.forEach((k, v) -> keys.put(k.startsWith("rollcall.") ? k : P + k, v));
        return keys;
    }

    ConsulWorkerDiscovery discovery(Map<String, String> extra) {
        WorkerDiscovery d = new ConsulWorkerDiscoveryProvider().create(Settings.of(keys(extra)).scope(P));
        toClose.add(d);
        return (ConsulWorkerDiscovery) d;
    }

    ConsulWorkerDiscovery started(Map<String, String> extra, CandidateRecorder listener) {
        ConsulWorkerDiscovery d = discovery(extra);
        d.start(listener);
        return d;
    }

    <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /** Service IDs are global to an agent: unique per test, so a shared agent is fine. */
    String id(String name) {
        return service + "-" + name;
    }

    static Set<String> urls(String... urls) {
        return new TreeSet<>(List.of(urls));
    }

    @Test
    void instancesAppearAndDisappearThroughBlockingQueries() {
        CandidateRecorder listener = new CandidateRecorder();
        // A wait no test step lasts: every answer after the first is a change, not a timeout.
        ConsulWorkerDiscovery discovery = started(Map.of("wait", "60s"), listener);
        await().atMost(SEEN).until(() -> Set.of().equals(listener.latestUrls()));
        long first = discovery.queriesSent();

        agent.register(service, id("a"), "127.0.0.1", 7001);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
        agent.register(service, id("b"), "127.0.0.2", 7002);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.2:7002")
                .equals(listener.latestUrls()));
        agent.deregister(id("a"));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.2:7002").equals(listener.latestUrls()));

        // Three changes, each answered by the query that was waiting for it (a busy agent may wake
        // a query for unrelated writes, hence some room; polling would be hundreds).
        assertThat(discovery.queriesSent() - first).isBetween(3L, 12L);
        assertThat(listener.errors()).isEmpty();
    }

    @Test
    void sendsAtMostOneQueryPerWaitPeriodWhileNothingChanges() {
        agent.register(service, id("a"), "127.0.0.1", 7001);
        CandidateRecorder listener = new CandidateRecorder();
        ConsulWorkerDiscovery discovery = started(Map.of("wait", "1s"), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001").equals(listener.latestUrls()));
        long base = discovery.queriesSent();

        // In 3 s of a 1 s wait (plus Consul's jitter of up to 1/16): at most the three queries
        // that timed out and the one waiting now.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                .until(() -> discovery.queriesSent() - base <= 4);

        assertThat(discovery.queriesSent()).as("still watching").isGreaterThan(base);
        assertThat(listener.sets()).as("nothing changed, nothing published").hasSize(1);
    }

    @Test
    void failingTtlCheckRemovesTheInstanceUntilItPassesAgain() {
        agent.register(service, id("a"), "127.0.0.1", 7001, List.of(), Map.of(), "30s", "passing");
        agent.register(service, id("b"), "127.0.0.1", 7002);
        CandidateRecorder listener = new CandidateRecorder();
        started(Map.of(), listener);
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(listener.latestUrls()));

        agent.fail("service:" + id("a"));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7002").equals(listener.latestUrls()));

        agent.pass("service:" + id("a"));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(listener.latestUrls()));
    }

    @Test
    void passingOnlyFalsePublishesInstancesInEveryHealthState() {
        agent.register(service, id("sick"), "127.0.0.1", 7001, List.of(), Map.of(), "30s", "critical");
        agent.register(service, id("fine"), "127.0.0.1", 7002);
        CandidateRecorder healthy = new CandidateRecorder();
        CandidateRecorder all = new CandidateRecorder();
        started(Map.of(), healthy);
        started(Map.of("passing-only", "false"), all);

        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7002").equals(healthy.latestUrls()));
        await().atMost(SEEN).until(() -> urls("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002")
                .equals(all.latestUrls()));
    }

    @Test
    void registeredWorkerIsResolvedAndLeavesAtOnceOnCleanShutdown() throws Exception {
        // A long TTL: only deregistration can remove the worker within the wait below.
        Map<String, String> keys = keys(Map.of(
                "rollcall.discovery.type", "consul",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1",
                "rollcall.worker.register", "true",
                "registration.check-ttl", "60s"));
        WorkerResolver resolver = closeLater(WorkerResolver.fromConfig(RollcallConfig.of(keys)));
        RollcallWorker compatible = closeLater(RollcallWorker.builder().version("1.4.0")
                .config(RollcallConfig.of(keys)).start());
        RollcallWorker incompatible = closeLater(RollcallWorker.builder().version("2.0.0")
                .config(RollcallConfig.of(keys)).start());

        await().atMost(SEEN).until(() -> workerUrls(resolver).equals(urls(compatible.endpoint().url())));
        assertThat(resolver.pin().counts().candidates()).isEqualTo(2);
        assertThat(compatible.registration().orElseThrow().description())
                .contains(service).doesNotContain(String.valueOf(token()));

        compatible.close();

        await().atMost(Duration.ofSeconds(5)).until(() -> resolver.pin().counts().candidates() == 1);
        assertThat(resolver.workers()).isEmpty();
        incompatible.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> resolver.pin().counts().candidates() == 0);
    }

    @Test
    void workerWhoseHeartbeatStopsDisappearsWhenItsTtlRunsOut() throws IOException {
        Map<String, String> keys = keys(Map.of(
                "rollcall.discovery.type", "consul",
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1",
                "rollcall.worker.register", "true",
                "registration.check-ttl", "1s",
                "registration.deregister-after", deregisterAfter()));
        WorkerResolver resolver = closeLater(WorkerResolver.fromConfig(RollcallConfig.of(keys)));
        RollcallWorker worker = closeLater(RollcallWorker.builder().version("1.0.0")
                .config(RollcallConfig.of(keys)).start());
        await().atMost(SEEN).until(() -> workerUrls(resolver).equals(urls(worker.endpoint().url())));

        // The worker's process still serves, but its heartbeats stop, as when it hangs or is cut off.
        ((ConsulRegistration) worker.registration().orElseThrow()).abandon();

        await().atMost(SEEN).until(() -> resolver.pin().counts().candidates() == 0);
        assertThat(resolver.workers()).isEmpty();
    }

    static Set<String> workerUrls(WorkerResolver resolver) {
        return resolver.workers().stream().map(WorkerInfo::endpoint).map(e -> e.url())
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
