package dev.rollcall.it.faults;

import static dev.rollcall.testkit.HostileText.FORGED;
import static dev.rollcall.testkit.HostileText.forging;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.it.PlainWorkerServer;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.HandlerInfo;
import dev.rollcall.protocol.v1.ServiceInfo;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.HostileText;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.consul.ConsulStandIn;
import dev.rollcall.testkit.dns.DnsServer;
import dev.rollcall.local.etcd.EtcdServer;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every door of the coordinator, fed text made to fool a log ({@link HostileText}: a line break and
 * a forged log line, a carriage return, a terminal colour, NUL, U+2028, NEL): a worker's gRPC status
 * on a probe and on an exact drain's {@code ReleaseWorker}, what a worker says of itself (version,
 * instance id, label keys and values, service and handler names), and values in the discovery
 * backends (a static file's lines, etcd keys and values, ZooKeeper payloads and node names, Consul
 * health entries, DNS SRV targets; Kubernetes slices in discovery-k8s's own test, next to its mock
 * API server). Every logger is captured at its
 * finest level; no captured line may hold a raw control character, and a forged line may never
 * start a line of its own.
 */
class HostileTextNeverReachesLogsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private final Closer closeables = new Closer();

    @TempDir
    Path dir;

    private String testName = "unnamed";

    @org.junit.jupiter.api.BeforeEach
    void name(org.junit.jupiter.api.TestInfo info) {
        testName = info.getTestMethod().map(java.lang.reflect.Method::getName).orElse("unnamed");
    }

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    /**
     * Loggers outside Rollcall that dump what travels on the wire, peer text included, unescaped:
     * ZooKeeper's client prints every packet, node paths included, at DEBUG (docs/configuration.md
     * says to keep it at INFO), and the test's in-process ZooKeeper server is not the coordinator.
     */
    private static final Set<String> WIRE_DUMPS = Set.of("org.apache.zookeeper.ClientCnxn",
            "org.apache.zookeeper.server.");

    /**
     * What was logged while {@code drive} ran, once it returned (kept in target/hostile-text/ for
     * whoever wants to read it); fails on any hostile text that arrived raw.
     */
    private String logOf(Driver drive) throws Exception {
        String log;
        try (FinestLogCapture capture = new FinestLogCapture()) {
            drive.run(capture);
            log = capture.text();
        }
        Path kept = Files.createDirectories(Path.of("target", "hostile-text"));
        Files.writeString(kept.resolve(testName + ".log"), log);
        List<String> raw = HostileText.rawInLog(log, WIRE_DUMPS);
        assertThat(raw).as("hostile text that reached a log line raw").isEmpty();
        return log;
    }

    interface Driver {
        void run(FinestLogCapture capture) throws Exception;
    }

    private static void awaitLogged(FinestLogCapture capture, String door) {
        await().atMost(WAIT).until(() -> capture.text().contains(FORGED + door));
    }

    // ---------------------------------------------------------------- what workers say

    private static WorkerInfoResponse.Builder answer() {
        return WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId("hostile");
    }

    @Test
    void aWorkersStatusMessagesAndAnswersReachTheLogsEscaped() throws Exception {
        String log = logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            ScriptedWorker refusing = closing(ScriptedWorker.start((out, later) -> out.onError(
                    Status.PERMISSION_DENIED.withDescription(forging("probe-status")).asRuntimeException())));
            List<ScriptedWorker> lying = new ArrayList<>();
            for (WorkerInfoResponse a : List.of(
                    answer().setVersion(forging("version")).build(),
                    answer().setInstanceId(forging("instance")).build(),
                    answer().putLabels(forging("label-key"), "v").build(),
                    answer().putLabels("zone", forging("label-value")).build(),
                    answer().addServices(ServiceInfo.newBuilder().setName(forging("service"))).build(),
                    answer().addServices(ServiceInfo.newBuilder().setName("demo.v1.Orders")
                            .addHandlers(HandlerInfo.newBuilder().setName(forging("handler")))).build(),
                    answer().addCapabilities(Capability.newBuilder().setName(forging("capability-name"))).build(),
                    answer().addCapabilities(Capability.newBuilder().setName("datafusion")
                            .setVersion(forging("capability-version"))).build())) {
                lying.add(closing(ScriptedWorker.answering(a)));
            }
            PushDiscovery discovery = new PushDiscovery();
            WorkerResolver r = closing(WorkerResolver.builder().name("hostile").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0")).backoff(Duration.ofMillis(200), Duration.ofSeconds(1))
                    .build());
            List<WorkerEndpoint> all = new ArrayList<>(List.of(fleet.worker(0).endpoint(), refusing.endpoint()));
            lying.forEach(w -> all.add(w.endpoint()));
            discovery.push(all);

            r.awaitWorkers(1, WAIT);
            for (WorkerEndpoint e : all.subList(1, all.size())) {
                FleetSnapshot s = r.await(snap -> snap.status(e.url())
                        .map(st -> st.state() == WorkerStatus.State.UNREACHABLE).orElse(false), WAIT);
                assertThat(HostileText.rawInLog(s.status(e.url()).orElseThrow().toString())).as("status of %s", e)
                        .isEmpty();
            }
            awaitLogged(capture, "probe-status");
        });
        assertThat(log).contains("PERMISSION_DENIED");
    }

    /**
     * Under {@code none}, a worker's capabilities are discovery's {@code rollcall.capabilities}
     * label: a hostile one leaves that worker out, and its reason reaches the logs escaped.
     */
    @Test
    void aHostileCapabilitiesLabelUnderNoneReachesTheLogsEscaped() throws Exception {
        logOf(capture -> {
            PushDiscovery discovery = new PushDiscovery();
            WorkerResolver r = closing(WorkerResolver.builder().name("hostile-claim").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0")).probeProtocol("none").build());
            WorkerEndpoint honest = WorkerEndpoint.of("127.0.0.1", 7001).withLabels(Map.of(
                    WorkerEndpoint.VERSION_LABEL, "1.0.0", WorkerEndpoint.CAPABILITIES_LABEL, "udf:geo_distance"));
            WorkerEndpoint hostile = WorkerEndpoint.of("127.0.0.1", 7002).withLabels(Map.of(
                    WorkerEndpoint.VERSION_LABEL, "1.0.0",
                    WorkerEndpoint.CAPABILITIES_LABEL, "udf:geo_distance, " + forging("capabilities-label")));
            discovery.push(List.of(honest, hostile));
            FleetSnapshot s = r.await(snap -> snap.status(hostile.url())
                    .map(st -> st.state() == WorkerStatus.State.UNREACHABLE).orElse(false), WAIT);
            assertThat(s.workersWith("udf:geo_distance")).extracting(w -> w.endpoint().url())
                    .containsExactly(honest.url());
            assertThat(HostileText.rawInLog(s.status(hostile.url()).orElseThrow().toString())).isEmpty();
            awaitLogged(capture, "capabilities-label");
        });
    }

    /** A worker whose {@code ReleaseWorker} refuses with a hostile message: logged once, at INFO, escaped. */
    @Test
    void aReleaseRefusedUnderExactDrainReachesTheLogsEscaped() throws Exception {
        logOf(capture -> {
            PlainWorkerServer worker = closing(new PlainWorkerServer(answer().setRevision(1).build(),
                    Status.FAILED_PRECONDITION.withDescription(forging("release"))));
            PushDiscovery discovery = new PushDiscovery();
            discovery.push(List.of(worker.endpoint()));
            WorkerResolver r = closing(WorkerResolver.builder().name("hostile-drain").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0")).fetchSchemas(false).exactDrain(true).build());
            r.awaitWorkers(1, WAIT);
            try (SnapshotLease lease = r.lease()) {
                assertThat(lease.snapshot().compatibleEndpoints()).containsExactly(worker.endpoint());
            }
            worker.state(ServingState.DRAINING);
            r.await(s -> s.counts().draining() == 1, WAIT);
            await().atMost(WAIT).until(() -> worker.releases.get() == 1);
            awaitLogged(capture, "release");
        });
    }

    // ---------------------------------------------------------------- what the backends hold

    private WorkerResolver resolverFrom(Map<String, String> discoveryKeys) {
        Map<String, String> keys = new java.util.HashMap<>(discoveryKeys);
        keys.put("rollcall.policy.type", "semver");
        keys.put("rollcall.policy.semver.range", "^1.0");
        keys.put("rollcall.probe.backoff.initial", "100ms");
        keys.put("rollcall.probe.backoff.max", "1s");
        return closing(WorkerResolver.fromConfig(RollcallConfig.of(keys)));
    }

    private static Predicate<FleetSnapshot> lists(WorkerEndpoint e) {
        return s -> s.compatibleEndpoints().stream().anyMatch(c -> c.url().equals(e.url()));
    }

    @Test
    void hostileLinesOfAStaticFileReachTheLogsEscaped() throws Exception {
        logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            // A file is read line by line: a line break cannot be inside a line, every other character can.
            String hostile = forging("static").replace("\n", " ");
            Path file = Files.writeString(dir.resolve("workers.txt"), fleet.worker(0).endpoint().url() + "\n"
                    + "grpc://127.0.0.1:1/" + hostile + "\n" + hostile + "\n" + "grpc://" + hostile + ":7001\n");
            WorkerResolver r = resolverFrom(Map.of("rollcall.discovery.type", "static",
                    "rollcall.discovery.static.file", file.toString()));
            r.await(lists(fleet.worker(0).endpoint()), WAIT);
            awaitLogged(capture, "static");
        });
    }

    @Test
    void hostileKeysAndValuesInEtcdReachTheLogsEscaped() throws Exception {
        EtcdServer etcd = closing(EtcdServer.start());
        logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            String prefix = "/rollcall/hostile/";
            try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
                put(client, prefix + "good", fleet.worker(0).endpoint().url());
                put(client, prefix + "url", "grpc://127.0.0.1:1/" + forging("etcd-url"));
                put(client, prefix + "json", "{\"endpoint\":\"grpc://127.0.0.1:2\",\"labels\":{\"zone\":"
                        + json(forging("etcd-label")) + "},\"version\":" + json(forging("etcd-version")) + "}");
                put(client, prefix + forging("etcd-key"), "grpc://127.0.0.1:3");
                put(client, prefix + "endpoint", "{\"endpoint\":" + json("grpc://" + forging("etcd-endpoint")) + "}");
            }
            WorkerResolver r = resolverFrom(Map.of("rollcall.discovery.type", "etcd",
                    "rollcall.discovery.etcd.endpoints", etcd.endpoint(),
                    "rollcall.discovery.etcd.prefix", prefix));
            r.await(lists(fleet.worker(0).endpoint()), WAIT);
            awaitLogged(capture, "etcd-url");
        });
    }

    private static void put(Client client, String key, String value) throws Exception {
        client.getKVClient().put(ByteSequence.from(key, StandardCharsets.UTF_8),
                ByteSequence.from(value, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
    }

    /** {@code s} as a JSON string: control characters as JSON escapes, which a parser turns back into raw ones. */
    private static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c >= 0x7f) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    @Test
    void hostilePayloadsInZooKeeperReachTheLogsEscaped() throws Exception {
        ZooKeeperServer zk = closing(ZooKeeperServer.start());
        logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            String path = "/rollcall/hostile";
            try (CuratorFramework client = CuratorFrameworkFactory.newClient(zk.connectString(), 10_000, 10_000,
                    new RetryOneTime(200))) {
                client.start();
                create(client, path + "/good", fleet.worker(0).endpoint().url());
                create(client, path + "/url", "grpc://127.0.0.1:1/" + forging("zk-url"));
                create(client, path + "/json", "{\"endpoint\":\"grpc://127.0.0.1:2\",\"labels\":{\"zone\":"
                        + json(forging("zk-label")) + "},\"version\":" + json(forging("zk-version")) + "}");
                create(client, path + "/curator", "{\"name\":\"w\",\"id\":\"x\",\"address\":"
                        + json(forging("zk-address")) + ",\"port\":7001,\"payload\":{\"version\":"
                        + json(forging("zk-payload-version")) + "}}");
                // ZooKeeper refuses C0 and C1 controls in a node's name; U+2028 it takes.
                create(client, path + "/line\u2028" + "FORGED zk-name", "grpc://127.0.0.1:3");
            }
            WorkerResolver r = resolverFrom(Map.of("rollcall.discovery.type", "zookeeper",
                    "rollcall.discovery.zookeeper.connect", zk.connectString(),
                    "rollcall.discovery.zookeeper.path", path));
            r.await(lists(fleet.worker(0).endpoint()), WAIT);
            awaitLogged(capture, "zk-url");
        });
    }

    private static void create(CuratorFramework client, String path, String data) throws Exception {
        client.create().orSetData().creatingParentsIfNeeded().forPath(path, data.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void hostileHealthEntriesInConsulReachTheLogsEscaped() throws Exception {
        ConsulStandIn consul = closing(ConsulStandIn.start());
        logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            consul.injectRawInstance("workers", entry(json("node-1"), json("good"), json("127.0.0.1"),
                    fleet.worker(0).endpoint().port(), "[]", "{}"));
            consul.injectRawInstance("workers", entry(json("node-2"), json(forging("consul-id")), json("127.0.0.1"),
                    "7002", "[]", "{\"version\":" + json(forging("consul-version")) + "}"));
            consul.injectRawInstance("workers", entry(json(forging("consul-node")), json("w3"),
                    json(forging("consul-address")), "7003", "[" + json(forging("consul-tag")) + "]",
                    "{" + json(forging("consul-meta-key")) + ":" + json(forging("consul-meta")) + "}"));
            consul.injectRawInstance("workers", entry(json("node-4"), json("w4"), json("127.0.0.1"),
                    json(forging("consul-port")), "[]", "{}"));
            WorkerResolver r = resolverFrom(Map.of("rollcall.discovery.type", "consul",
                    "rollcall.discovery.consul.address", consul.address(),
                    "rollcall.discovery.consul.service", "workers",
                    "rollcall.discovery.consul.wait", "1s"));
            r.await(lists(fleet.worker(0).endpoint()), WAIT);
            awaitLogged(capture, "consul-id");
        });
    }

    /** One health entry as Consul's {@code /v1/health/service} answers it; every argument is JSON already. */
    private static String entry(String node, String id, String address, Object port, String tags, String meta) {
        return "{\"Node\":{\"Node\":" + node + ",\"Address\":\"127.0.0.1\"},\"Service\":{\"ID\":" + id
                + ",\"Service\":\"workers\",\"Address\":" + address + ",\"Port\":" + port + ",\"Tags\":" + tags
                + ",\"Meta\":" + meta + "},\"Checks\":[]}";
    }

    @Test
    void hostileSrvTargetsReachTheLogsEscaped() throws Exception {
        DnsServer dns = closing(DnsServer.start("rollcall.test."));
        logOf(capture -> {
            WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
            String name = "_workers._tcp.rollcall.test.";
            dns.add("good.rollcall.test.", "A", 1, "127.0.0.1");
            dns.add(name, "SRV", 1, "0 0 " + fleet.worker(0).endpoint().port() + " good.rollcall.test.");
            // Zone-file escapes: a label holding a line break, ESC and NUL, which the DNS carries as bytes.
            String evil = "evil\\010FORGED\\032dns-srv\\013\\027[31m\\000.rollcall.test.";
            dns.add(evil, "A", 1, "127.0.0.1");
            dns.add(name, "SRV", 1, "0 0 7001 " + evil);
            dns.add(name, "SRV", 1, "0 0 7002 nowhere\\010FORGED\\032dns-nowhere.rollcall.test.");
            WorkerResolver r = resolverFrom(Map.of("rollcall.discovery.type", "dns",
                    "rollcall.discovery.dns.name", name,
                    "rollcall.discovery.dns.record-type", "SRV",
                    "rollcall.discovery.dns.server", dns.address(),
                    "rollcall.discovery.dns.min-interval", "200ms",
                    "rollcall.discovery.dns.max-interval", "1s"));
            r.await(lists(fleet.worker(0).endpoint()), WAIT);
            await().atMost(WAIT).until(() -> capture.text().contains("dns-nowhere"));
        });
    }
}
