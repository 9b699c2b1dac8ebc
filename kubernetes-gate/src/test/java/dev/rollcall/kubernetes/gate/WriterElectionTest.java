package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.discovery.k8s.KubernetesAccess;
import dev.rollcall.kubernetes.gate.internal.GateKeys.LeaseTimings;
import dev.rollcall.kubernetes.gate.internal.WriterElection;
import dev.rollcall.testkit.faults.FaultProxy;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The election alone, each replica with its own client of the mock API server, recording when it is
 * told to write and to stop: the order of those events across replicas is what "one writer" means.
 */
class WriterElectionTest {

    private static final String LEASE = OneWriterTest.LEASE;
    private static final LeaseTimings SHORT = new LeaseTimings(Duration.ofSeconds(3), Duration.ofSeconds(2),
            Duration.ofMillis(500));
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private MockCluster cluster;
    private final List<AutoCloseable> closing = new ArrayList<>();
    /** "a+", "a-", "b+" ...: each replica's start and stop of writing, in the order they happened. */
    private final List<String> events = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger writers = new AtomicInteger();
    private final AtomicInteger mostWriters = new AtomicInteger();

    @BeforeEach
    void start() {
        cluster = MockCluster.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        cluster.close();
    }

    @Test
    void aWriterThatCannotRenewStopsBeforeAnotherReplicaTakesOver() {
        FaultProxy toApi = closeLater(FaultProxy.to(cluster.port()));
        WriterElection a = election("a", "http://" + toApi.hostAndPort(), Optional.empty(), SHORT);
        await().atMost(WITHIN).until(() -> events.contains("a+"));
        WriterElection b = election("b", cluster.url(), Optional.empty(), SHORT);

        toApi.blackhole();      // a can neither renew nor release, and fabric8's request in flight hangs

        await().atMost(OneWriterTest.TAKE_OVER).until(() -> events.contains("b+"));
        assertThat(cluster.holder(LEASE)).contains(b.identity());
        assertThat(events).containsSubsequence("a+", "a-", "b+");
        assertThat(mostWriters).hasValue(1);
        toApi.pass();
    }

    @Test
    void anOrderlyStopHandsTheLeaseOverAtTheNextTryNotAfterALeaseDuration() {
        LeaseTimings longLease = new LeaseTimings(Duration.ofSeconds(15), Duration.ofSeconds(10),
                Duration.ofMillis(500));
        WriterElection a = election("a", cluster.url(), Optional.empty(), longLease);
        await().atMost(WITHIN).until(() -> events.contains("a+"));
        WriterElection b = election("b", cluster.url(), Optional.empty(), longLease);

        a.close();      // as rollcall serve does on SIGTERM

        assertThat(events).containsSubsequence("a+", "a-");
        // Within b's next try (a retry period and fabric8's jitter), well inside the 15s lease.
        await().atMost(Duration.ofMillis(1100).plusSeconds(2)).until(() -> events.contains("b+"));
        assertThat(cluster.holder(LEASE)).contains(b.identity());
        assertThat(mostWriters).hasValue(1);
    }

    @Test
    void aReplayedHolderIdentityNeverMakesTwoWriters() {
        // A live Lease whose holderIdentity is exactly the configured name: what a stale replica of the
        // same name (or anyone copying it) holds and keeps renewing.
        KubernetesClient stale = cluster.client();
        stale.leases().inNamespace(MockCluster.NS).resource(new LeaseBuilder()
                .withNewMetadata().withName(LEASE).withNamespace(MockCluster.NS).endMetadata()
                .withNewSpec().withHolderIdentity("coordinator").withLeaseDurationSeconds(3)
                    .withAcquireTime(now()).withRenewTime(now()).withLeaseTransitions(0).endSpec()
                .build()).create();
        ScheduledExecutorService renewing = Executors.newSingleThreadScheduledExecutor(
                NamedThreads.daemon("test-stale-holder"));
        closeLater(renewing::shutdownNow);
        renewing.scheduleAtFixedRate(() -> stale.leases().inNamespace(MockCluster.NS).withName(LEASE)
                .edit(l -> new LeaseBuilder(l).editSpec().withRenewTime(now()).endSpec().build()),
                500, 500, TimeUnit.MILLISECONDS);

        WriterElection a = election("a", cluster.url(), Optional.of("coordinator"), SHORT);
        WriterElection b = election("b", cluster.url(), Optional.of("coordinator"), SHORT);

        // Two lease durations: neither takes the stale holder's lease for its own.
        await("no replica writes while the stale holder renews").during(Duration.ofSeconds(6))
                .atMost(Duration.ofSeconds(9)).until(() -> writers.get() == 0);

        renewing.shutdownNow();     // the stale holder dies
        await("one replica writes once the stale holder's lease ran out")
                .atMost(OneWriterTest.TAKE_OVER.plus(SHORT.retryPeriod())).until(() -> writers.get() == 1);
        await("still exactly one writer").during(SHORT.duration()).atMost(SHORT.duration().multipliedBy(2))
                .until(() -> writers.get() == 1);
        assertThat(mostWriters).hasValue(1);
        assertThat(cluster.holder(LEASE).orElseThrow()).isIn(a.identity(), b.identity());
        assertThat(a.identity()).startsWith("coordinator_").isNotEqualTo(b.identity());
    }

    private WriterElection election(String name, String master, Optional<String> identity, LeaseTimings timings) {
        RollcallConfig config = RollcallConfig.of(OneWriterTest.baseConfig(master));
        KubernetesAccess access = KubernetesAccess.fromConfig(config);
        ExecutorService threads = Executors.newCachedThreadPool(NamedThreads.daemon("test-client-" + name));
        closeLater(threads::shutdownNow);
        KubernetesClient client = closeLater(access.newClient(threads));
        WriterElection election = new WriterElection(client, MockCluster.NS, LEASE,
                WriterElection.uniqueIdentity(identity, Map.of()), timings, writing -> {
                    if (writing) {
                        mostWriters.accumulateAndGet(writers.incrementAndGet(), Math::max);
                    } else {
                        writers.decrementAndGet();
                    }
                    events.add(name + (writing ? "+" : "-"));
                });
        closeLater(election);
        election.start();
        return election;
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        closing.add(resource);
        return resource;
    }

    private static ZonedDateTime now() {
        return ZonedDateTime.now(ZoneOffset.UTC);
    }
}
