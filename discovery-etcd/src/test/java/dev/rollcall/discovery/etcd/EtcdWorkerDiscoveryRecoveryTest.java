package dev.rollcall.discovery.etcd;

import dev.rollcall.testkit.CandidateRecorder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.local.etcd.EtcdServer;
import java.time.Duration;
import java.util.Map;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * etcd going away mid-watch and coming back: the backend reports it, keeps the last set, and
 * resumes without losing what changed meanwhile.
 *
 * <p>The reconnect backoff is a fixed 5 s here (4 to 5 s with jitter), while a restart of the
 * test's etcd takes about half a second: so the test's writes after the restart land before the
 * watch has resumed, the case that matters. Each test checks that this ordering really held (the
 * number of confirmed watches had not moved) rather than trusting the timing.
 */
class EtcdWorkerDiscoveryRecoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PREFIX = "/rollcall/workers/";

    private EtcdServer server;
    private EtcdWorkerDiscovery discovery;
    private final CandidateRecorder listener = new CandidateRecorder();

    @BeforeEach
    void startEtcd() {
        server = EtcdServer.start();
    }

    @AfterEach
    void stopAll() {
        if (discovery != null) {
            discovery.close();
        }
        server.close();
    }

    private void startDiscovery() {
        discovery = (EtcdWorkerDiscovery) new EtcdWorkerDiscoveryProvider().create(Etcd.settings(Map.of(
                "endpoints", server.endpoint(),
                "connect-timeout", "1s", "request-timeout", "2s",
                "backoff.initial", "5s", "backoff.max", "5s")));
        discovery.start(listener);
    }

    private void awaitLatest(Set<WorkerEndpoint> expected) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(listener.latest()).isEqualTo(expected));
    }

    /** Stops etcd, waits until the backend has noticed, starts etcd again. */
    private void bounceEtcd() {
        int errorsBefore = listener.errors().size();
        server.stop();
        await().atMost(WAIT).until(() -> listener.errors().size() > errorsBefore);
        assertThat(listener.errors().get(errorsBefore)).hasMessageContaining(server.endpoint())
                .hasMessageContaining(PREFIX);
        server.restart();
    }

    @Test
    void seesAChangeWrittenAfterEtcdRestartsBeforeTheWatchResumes() {
        try (Etcd etcd = new Etcd(server)) {
            etcd.put(PREFIX + "a", "grpc://127.0.5.1:7001");
        }
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.5.1:7001")));
        // The first set is published after the read, before etcd confirms the watch: wait for that.
        await().atMost(WAIT).until(() -> discovery.watchesEstablished() == 1);
        long watches = discovery.watchesEstablished();
        int setsBefore = listener.sets().size();

        bounceEtcd();
        try (Etcd etcd = new Etcd(server)) {    // a fresh client: the old one's channel is backing off
            etcd.put(PREFIX + "b", "grpc://127.0.5.2:7001");
        }
        assertThat(discovery.watchesEstablished()).as("the write happened before the watch resumed").isEqualTo(watches);
        assertThat(listener.sets()).as("nothing published while etcd was away").hasSize(setsBefore);

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.5.1:7001"), WorkerEndpoint.parse("grpc://127.0.5.2:7001")));
        assertThat(discovery.watchesEstablished()).isEqualTo(watches + 1);
        assertThat(discovery.fullReads()).as("resumed from its revision, without reading the prefix again").isEqualTo(1);
    }

    @Test
    void publishesAgainAfterAnOutageThatChangedNothing() {
        try (Etcd etcd = new Etcd(server)) {
            etcd.put(PREFIX + "a", "grpc://127.0.5.1:7001");
        }
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.5.1:7001")));
        int setsBefore = listener.sets().size();

        bounceEtcd();

        // The resolver marks the set stale on the error; the same set, published again, clears it.
        await().atMost(WAIT).until(() -> listener.sets().size() > setsBefore);
        assertThat(listener.latest()).isEqualTo(Set.of(WorkerEndpoint.parse("grpc://127.0.5.1:7001")));
        assertThat(discovery.fullReads()).isEqualTo(1);
    }

    @Test
    void readsTheWholePrefixAgainWhenTheRevisionToResumeFromWasCompacted() {
        try (Etcd etcd = new Etcd(server)) {
            etcd.put(PREFIX + "a", "grpc://127.0.6.1:7001");
            etcd.put(PREFIX + "b", "grpc://127.0.6.2:7001");
        }
        startDiscovery();
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.6.1:7001"), WorkerEndpoint.parse("grpc://127.0.6.2:7001")));
        // The first set is published after the read, before etcd confirms the watch: wait for that.
        await().atMost(WAIT).until(() -> discovery.watchesEstablished() == 1);
        long watches = discovery.watchesEstablished();

        bounceEtcd();
        try (Etcd etcd = new Etcd(server)) {
            etcd.delete(PREFIX + "a");                        // this deletion's event is compacted away
            etcd.put(PREFIX + "c", "grpc://127.0.6.3:7001");
            etcd.compactAll();
        }
        assertThat(discovery.watchesEstablished()).as("compacted before the watch resumed").isEqualTo(watches);

        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.6.2:7001"), WorkerEndpoint.parse("grpc://127.0.6.3:7001")));
        assertThat(discovery.fullReads()).as("the whole prefix was read again").isEqualTo(2);

        try (Etcd etcd = new Etcd(server)) {
            etcd.put(PREFIX + "d", "grpc://127.0.6.4:7001");
        }
        awaitLatest(Set.of(WorkerEndpoint.parse("grpc://127.0.6.2:7001"), WorkerEndpoint.parse("grpc://127.0.6.3:7001"),
                WorkerEndpoint.parse("grpc://127.0.6.4:7001")));
    }

    /**
     * jetcd retries a broken watch itself, 500 ms later, on its own executor, and our backend
     * reconnects on a fresh client after its backoff (500 ms by default): closing the old client
     * just then shut that executor down under jetcd's retry, and Guava logged a SEVERE
     * RejectedExecutionException through java.util.logging on every attempt.
     */
    @Test
    void anOutageWithTheDefaultBackoffLogsNothingThroughJavaUtilLogging() {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.addHandler(handler);
        try {
            discovery = (EtcdWorkerDiscovery) new EtcdWorkerDiscoveryProvider().create(Etcd.settings(Map.of(
                    "endpoints", server.endpoint(), "connect-timeout", "1s", "request-timeout", "2s",
                    "backoff.initial", "500ms", "backoff.max", "500ms")));
            discovery.start(listener);
            await().atMost(WAIT).until(() -> discovery.watchesEstablished() == 1);

            server.stop();
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
            // About ten reconnects, each on a fresh client, each racing jetcd's own retry.
            await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).until(records::isEmpty);
            server.restart();
            await().atMost(WAIT).until(() -> discovery.watchesEstablished() == 2);
        } finally {
            root.removeHandler(handler);
        }
        assertThat(records).extracting(r -> r.getLoggerName() + " " + r.getLevel() + " " + r.getMessage()
                + (r.getThrown() == null ? "" : " " + r.getThrown())).isEmpty();
    }
}
