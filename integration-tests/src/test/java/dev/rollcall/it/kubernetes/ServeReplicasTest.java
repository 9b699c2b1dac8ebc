package dev.rollcall.it.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas of {@code rollcall serve}, each a JVM of its own with the readiness gate on, electing the
 * one that writes through a Lease on fabric8's mock API server (CRUD mode, loopback): a replica
 * killed with SIGKILL (nothing released) is replaced within the lease's duration; one ended by
 * SIGHUP (the JVM's shutdown hook) releases the Lease, and the other takes over at its next try.
 */
class ServeReplicasTest {

    private static final String NS = "compute";
    private static final String SERVICE = "compute-workers";
    private static final String GATE = "rollcall.dev/compatible";
    private static final String LEASE = "rollcall-gate";
    private static final Duration WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private KubernetesMockServer server;
    private KubernetesClient client;
    private WorkerFleet fleet;
    private final List<Process> replicas = new ArrayList<>();
    /** What each replica printed (stdout and stderr), for a failure's message. */
    private final java.util.Map<Process, List<String>> outputs = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeEach
    @SuppressWarnings("deprecation")    // the mock's own JUnit extension builds its context with this mapper
    void start() {
        MockWebServer web = new MockWebServer();
        web.setHttp2ClearTextEnabled(false);
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), web, new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.start(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
        fleet = WorkerFleet.start("1.4.0", "1.4.0");
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : replicas) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        fleet.close();
        client.close();
        server.destroy();
    }

    @Test
    void aKilledReplicaIsReplacedWithinTheLeaseDurationAndItsSuccessorAdmitsNewPods() throws Exception {
        addPod("w-0", 0);
        Process a = serve("serve-a", "3s", "2s", "500ms");
        await().atMost(WITHIN).until(() -> holder().orElse("").startsWith("serve-a_"));
        serve("serve-b", "3s", "2s", "500ms");
        awaitCompatible("w-0");

        a.destroyForcibly();    // SIGKILL: no release, no last word
        a.waitFor(10, TimeUnit.SECONDS);
        addPod("w-1", 1);       // only the successor can admit it

        // The promise: the lease's duration, a try with fabric8's jitter (1.2 retry periods), slack.
        await("serve-b holds the lease of the killed serve-a").atMost(Duration.ofMillis(3000 + 1100 + 3000))
                .until(() -> holder().orElse("").startsWith("serve-b_"));
        awaitCompatible("w-1");
    }

    @Test
    void aReplicaEndedBySighupReleasesTheLeaseAndTheOtherTakesOverAtItsNextTry() throws Exception {
        addPod("w-0", 0);
        Process a = serve("serve-a", "15s", "10s", "500ms");
        await().atMost(WITHIN).until(() -> holder().orElse("").startsWith("serve-a_"));
        serve("serve-b", "15s", "10s", "500ms");
        awaitCompatible("w-0");

        // SIGHUP: not one of the signals serve takes itself; the JVM's shutdown hook closes it.
        Process hup = new ProcessBuilder("kill", "-HUP", Long.toString(a.pid())).inheritIO().start();
        assertThat(hup.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(a.waitFor(30, TimeUnit.SECONDS)).as(() -> "serve-a ended after SIGHUP; its output:\n"
                + output(a)).isTrue();

        // At b's next try (a retry period and its jitter, slack), not after the 15s lease ran out.
        await("serve-b holds the lease serve-a released").atMost(Duration.ofMillis(1100 + 3000))
                .until(() -> holder().orElse("").startsWith("serve-b_"));
    }

    private Process serve(String identity, String duration, String renewDeadline, String retry) throws IOException {
        Path config = dir.resolve(identity + ".properties");
        Files.write(config, List.of(
                "rollcall.discovery.type=k8s",
                "rollcall.discovery.k8s.service=" + SERVICE,
                "rollcall.discovery.k8s.namespace=" + NS,
                "rollcall.discovery.k8s.master=http://127.0.0.1:" + server.getPort(),
                "rollcall.discovery.k8s.request-timeout=2s",
                "rollcall.policy.type=semver",
                "rollcall.policy.semver.range=^1.0.0",
                "rollcall.kubernetes.readiness-gate=" + GATE,
                "rollcall.kubernetes.identity=" + identity,
                "rollcall.kubernetes.lease.duration=" + duration,
                "rollcall.kubernetes.lease.renew-deadline=" + renewDeadline,
                "rollcall.kubernetes.lease.retry-period=" + retry), StandardCharsets.UTF_8);
        // Through python3, which sets SIGHUP back to its default before it becomes the JVM: a test run
        // under nohup (or any parent that ignores SIGHUP) hands the ignore down, and a JVM that starts
        // with SIGHUP ignored never runs its shutdown hooks on it, so the hook this test is about would
        // never be reached.
        List<String> command = List.of("python3", "-c",
                "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "dev.rollcall.cli.RollcallCommand",
                "serve", "--config", config.toString(), "--port", "0", "--http-port", "0");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        replicas.add(p);
        CompletableFuture<Void> gated = new CompletableFuture<>();
        List<String> lines = new ArrayList<>();
        outputs.put(p, lines);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                    if (line.startsWith("readiness gate " + GATE)) {
                        gated.complete(null);
                    }
                }
            } catch (IOException ended) {
                // the process ended
            } finally {
                gated.completeExceptionally(new IllegalStateException("its output ended"));
            }
        }, "test-serve-" + identity);
        reader.setDaemon(true);
        reader.start();
        try {
            gated.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            synchronized (lines) {
                throw new IllegalStateException(identity + " did not start its gate; its output:\n"
                        + String.join("\n", lines), e);
            }
        }
        return p;
    }

    private String output(Process p) {
        List<String> lines = outputs.getOrDefault(p, List.of());
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    private Optional<String> holder() {
        Lease lease = client.leases().inNamespace(NS).withName(LEASE).get();
        return lease == null || lease.getSpec() == null ? Optional.empty()
                : Optional.ofNullable(lease.getSpec().getHolderIdentity());
    }

    /** A pod declaring the gate, held back by it, and its endpoint, not serving until the gate is True. */
    private void addPod(String name, int worker) {
        int port = fleet.worker(worker).endpoint().port();
        client.pods().inNamespace(NS).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).addToLabels("app.kubernetes.io/name", SERVICE)
                .endMetadata()
                .withNewSpec().addNewReadinessGate().withConditionType(GATE).endReadinessGate()
                    .addNewContainer().withName("worker").withImage("worker:1.4.0").endContainer()
                .endSpec()
                .withNewStatus().withPhase("Running")
                    .addNewCondition().withType("ContainersReady").withStatus("True").endCondition()
                    .addNewCondition().withType("Ready").withStatus("False").withReason("ReadinessGatesNotReady")
                    .endCondition()
                .endStatus()
                .build()).create();
        String uid = client.pods().inNamespace(NS).withName(name).get().getMetadata().getUid();
        client.discovery().v1().endpointSlices().inNamespace(NS).resource(new EndpointSliceBuilder()
                .withNewMetadata().withName(SERVICE + "-" + name).withNamespace(NS)
                    .addToLabels("kubernetes.io/service-name", SERVICE).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("grpc").withPort(port).withProtocol("TCP").endPort()
                .withEndpoints(new EndpointBuilder().withAddresses("127.0.0.1")
                        .withNewConditions().withReady(false).withServing(false).withTerminating(false)
                        .endConditions()
                        .withNewTargetRef().withKind("Pod").withName(name).withNamespace(NS).withUid(uid)
                        .endTargetRef().build())
                .build()).create();
    }

    private void awaitCompatible(String pod) {
        await().atMost(WITHIN).until(() -> {
            var p = client.pods().inNamespace(NS).withName(pod).get();
            return p != null && p.getStatus().getConditions().stream()
                    .anyMatch(c -> GATE.equals(c.getType()) && "True".equals(c.getStatus()));
        });
    }
}
