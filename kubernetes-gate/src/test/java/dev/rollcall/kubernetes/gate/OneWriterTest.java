package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.ConsoleCapture;
import dev.rollcall.testkit.faults.FaultProxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Several replicas of {@code rollcall serve}, each with its own resolver, client and gate, on one mock
 * API server: only the holder of the Lease writes pods, a writer cut off from the API server is
 * replaced within the lease's duration, and without rights on leases nobody writes but discovery
 * goes on.
 */
class OneWriterTest {

    static final String LEASE = "rollcall-gate";
    static final Duration LEASE_DURATION = Duration.ofSeconds(3);
    static final Duration RETRY = Duration.ofMillis(500);
    /** fabric8 waits a retry period plus up to 1.2 times it (jitter) between tries to take the lease. */
    static final Duration TAKE_OVER = LEASE_DURATION.plus(RETRY.multipliedBy(22).dividedBy(10)).plusSeconds(2);
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private MockCluster cluster;
    private WorkerFleet fleet;

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
        fleet = WorkerFleet.start("1.4.0", "1.4.0", "1.4.0");
    }

    @AfterEach
    void stop() {
        cluster.close();
        fleet.close();
    }

    @Test
    void onlyTheLeaseHolderWritesAndTheOtherReplicaSendsNothing() {
        addPod("w-0", 0);
        addPod("w-1", 1);
        try (Replica a = new Replica(config(cluster.url()));
             Replica b = new Replica(config(cluster.url()))) {
            awaitCompatible("w-0");
            awaitCompatible("w-1");
            String holder = cluster.holder(LEASE).orElseThrow();
            Replica writer = holder.equals(a.gate.identity()) ? a : b;
            Replica idle = writer == a ? b : a;
            assertThat(holder).isEqualTo(writer.gate.identity());

            addPod("w-2", 2);
            awaitCompatible("w-2");
            assertThat(writer.gate.patches()).isGreaterThanOrEqualTo(3);
            assertThat(idle.gate.patches()).isZero();
        }
    }

    @Test
    void aWriterCutOffFromTheApiServerIsReplacedWithinTheLeaseDuration() {
        addPod("w-0", 0);
        try (FaultProxy toApi = FaultProxy.to(cluster.port());
             Replica a = new Replica(config("http://" + toApi.hostAndPort()))) {
            await().atMost(WITHIN).until(() -> cluster.holder(LEASE).orElse("").equals(a.gate.identity()));
            try (Replica b = new Replica(config(cluster.url()))) {
                awaitCompatible("w-0");
                assertThat(a.gate.patches()).isPositive();
                assertThat(b.gate.patches()).isZero();

                toApi.blackhole();      // a's host drops off the network: no release, no renewal
                addPod("w-1", 1);       // only a writer that took over can admit it

                // The promise: a successor within the lease's duration and a try (with fabric8's jitter).
                await().atMost(TAKE_OVER).until(() -> cluster.holder(LEASE).orElse("").equals(b.gate.identity()));
                awaitCompatible("w-1");
                assertThat(b.gate.patches()).isPositive();
                toApi.pass();           // lets a close
            }
        }
    }

    @Test
    void withoutRightsOnLeasesOneErrorNamesVerbResourceAndNamespaceAndDiscoveryGoesOn() throws Exception {
        cluster.leases().forbid();
        addPod("w-0", 0);
        try (ConsoleCapture console = new ConsoleCapture();
             Replica a = new Replica(config(cluster.url()))) {
            a.resolver.awaitWorkers(1, WITHIN);     // discovery and probing do not wait for the lease
            int before = cluster.leases().requests();
            await().atMost(WITHIN).until(() -> cluster.leases().requests() >= before + 4);   // several tries refused

            assertThat(a.resolver.workers()).hasSize(1);
            assertThat(a.gate.patches()).isZero();
            assertThat(cluster.gate("w-0")).isEmpty();
            assertThat(ConsoleCapture.seesLogs()).as("slf4j-simple writes this module's test log").isTrue();
            String log = console.text();
            assertThat(count(log, "forbidden to get leases (coordination.k8s.io) in namespace compute"))
                    .isEqualTo(1);
            assertThat(log).contains("get, create and patch on leases")
                    .doesNotContain("Exception occurred while acquiring lock");
        }
    }

    @Test
    void withOnlyGetOnLeasesOneErrorNamesTheVerbRefusedAndNoReplicaWrites() throws Exception {
        cluster.leases().forbidWrites();
        addPod("w-0", 0);
        try (ConsoleCapture console = new ConsoleCapture();
             Replica a = new Replica(config(cluster.url()))) {
            a.resolver.awaitWorkers(1, WITHIN);
            // Past a lease duration: the refused create was tried again, and refused again.
            await().atMost(WITHIN).until(() -> cluster.leases().refused() >= 2);

            assertThat(a.gate.patches()).isZero();
            assertThat(cluster.gate("w-0")).isEmpty();
            assertThat(cluster.holder(LEASE)).isEmpty();
            assertThat(ConsoleCapture.seesLogs()).as("slf4j-simple writes this module's test log").isTrue();
            assertThat(count(console.text(), "forbidden to create leases (coordination.k8s.io) in namespace compute"))
                    .isEqualTo(1);
        }
    }

    @Test
    void leaseDurationsOutOfOrderAreRefusedNamingBothKeysAndValues() {
        Map<String, String> renewTooLong = new HashMap<>(baseConfig(cluster.url()));
        renewTooLong.put("rollcall.kubernetes.lease.duration", "3s");
        renewTooLong.put("rollcall.kubernetes.lease.renew-deadline", "5s");
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(renewTooLong))) {
            assertThatThrownBy(() -> KubernetesGate.start(resolver, RollcallConfig.of(renewTooLong)))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.kubernetes.lease.renew-deadline=5s")
                    .hasMessageContaining("rollcall.kubernetes.lease.duration=3s");
        }

        Map<String, String> retryTooLong = new HashMap<>(baseConfig(cluster.url()));
        retryTooLong.put("rollcall.kubernetes.lease.retry-period", "10s");
        try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(retryTooLong))) {
            assertThatThrownBy(() -> KubernetesGate.start(resolver, RollcallConfig.of(retryTooLong)))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("rollcall.kubernetes.lease.retry-period=10s")
                    .hasMessageContaining("rollcall.kubernetes.lease.renew-deadline=PT10S");
        }
    }

    private void addPod(String name, int worker) {
        int port = fleet.worker(worker).endpoint().port();
        cluster.addGatedPod(name, "1.4.0", port);   // not serving: discovery takes it as a gated pod
    }

    private void awaitCompatible(String pod) {
        await().atMost(WITHIN).ignoreException(NoSuchElementException.class)
                .until(() -> "True".equals(cluster.gate(pod).orElseThrow().getStatus()));
    }

    private static int count(String text, String needle) {
        Matcher m = Pattern.compile(Pattern.quote(needle)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    static Map<String, String> baseConfig(String master) {
        Map<String, String> keys = new HashMap<>(MockCluster.gateConfig(master, Map.of()).values());
        keys.put("rollcall.discovery.k8s.request-timeout", "2s");
        return keys;
    }

    private static RollcallConfig config(String master) {
        Map<String, String> keys = new HashMap<>(baseConfig(master));
        keys.put("rollcall.kubernetes.lease.duration", "3s");
        keys.put("rollcall.kubernetes.lease.renew-deadline", "2s");
        keys.put("rollcall.kubernetes.lease.retry-period", "500ms");
        return RollcallConfig.of(keys);
    }

    /** One replica of rollcall serve: its own resolver and gate. */
    private static final class Replica implements AutoCloseable {

        final WorkerResolver resolver;
        final KubernetesGate gate;

        Replica(RollcallConfig config) {
            resolver = WorkerResolver.fromConfig(config);
            gate = KubernetesGate.start(resolver, config).orElseThrow();
        }

        @Override
        public void close() {
            try (resolver) {
                gate.close();
            }
        }
    }
}
