package dev.rollcall.kubernetes.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * fabric8's Kubernetes mock API server in CRUD mode on loopback, holding what a cluster holds for a
 * Deployment of workers: pods (with the readiness gate in their spec) and the service's
 * EndpointSlices, one per pod (each loopback worker listens on its own port). The test plays the
 * kubelet and the EndpointSlice controller through {@link #client()} (or {@link DeploymentSimulator}
 * does); {@link #requests()} lists what every other client asked for, i.e. Rollcall. A JSON Patch
 * whose {@code test} fails is answered 422, as by the API server.
 */
final class MockCluster implements AutoCloseable {

    static final String NS = "compute";
    static final String SERVICE = "compute-workers";
    static final String GATE = "rollcall.dev/compatible";

    private final KubernetesMockServer server;
    private final KubernetesClient client;

    /** The User-Agent of the test's own client (the kubelet, the controllers): Rollcall's requests are the others. */
    static final String TEST_AGENT = "rollcall-test-cluster";

    private final List<String> requests = new ArrayList<>();

    private MockCluster(KubernetesMockServer server) {
        this.server = server;
        this.client = server.createClient(b -> b.editOrNewConfig().withUserAgent(TEST_AGENT).endConfig());
    }

    @SuppressWarnings("deprecation")    // the mock's own JUnit extension builds its context with this mapper
    static MockCluster start() {
        MockWebServer web = new MockWebServer();
        web.setHttp2ClearTextEnabled(false);
        KubernetesMockServer server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), web,
                new HashMap<>(), new FailedTestAnswers422(), false);
        server.start(InetAddress.getLoopbackAddress(), 0);
        return new MockCluster(server);
    }

    /**
     * The CRUD dispatcher, answering a JSON Patch whose {@code test} operation fails with 422 as the API
     * server does; the mock itself throws on its event loop and leaves the request unanswered until the
     * client's timeout.
     */
    private static final class FailedTestAnswers422 extends KubernetesCrudDispatcher {
        @Override
        public MockResponse handlePatch(RecordedRequest request) {
            try {
                return super.handlePatch(request);
            } catch (RuntimeException e) {
                if (!e.getClass().getName().startsWith("io.fabric8.zjsonpatch.")) {
                    throw e;
                }
                return new MockResponse().setResponseCode(422).addHeader("Content-Type", "application/json")
                        .setBody(Serialization.asJson(Map.of("kind", "Status", "apiVersion", "v1",
                                "status", "Failure", "reason", "Invalid", "code", 422,
                                "message", "the server rejected our request due to an error in our request")));
            }
        }
    }

    /** The API server's URL, for {@code rollcall.discovery.k8s.master}. */
    String url() {
        return "http://127.0.0.1:" + server.getPort();
    }

    KubernetesClient client() {
        return client;
    }

    /**
     * A new pod of version {@code version} whose containers are ready, declaring the gate, as the
     * kubelet reports it while the gate holds it back; and its endpoint (not serving: the pod is not
     * Ready) listening on {@code port}.
     */
    void addGatedPod(String name, String version, int port) {
        client.pods().inNamespace(NS).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS)
                    .addToLabels("app.kubernetes.io/name", SERVICE).addToLabels("app.kubernetes.io/version", version)
                .endMetadata()
                .withNewSpec().addNewReadinessGate().withConditionType(GATE).endReadinessGate()
                    .addNewContainer().withName("worker").withImage("worker:" + version).endContainer()
                .endSpec()
                .withNewStatus().withPhase("Running")
                    .addNewCondition().withType("ContainersReady").withStatus("True").endCondition()
                    .addNewCondition().withType("Ready").withStatus("False").withReason("ReadinessGatesNotReady")
                    .endCondition()
                .endStatus()
                .build()).create();
        slice(name, port, false);
    }

    /** Writes the pod's endpoint as the EndpointSlice controller would. */
    void slice(String pod, int port, boolean serving) {
        slice(pod, port, serving, serving, false);
    }

    /** Writes the pod's endpoint with these conditions, as the EndpointSlice controller would. */
    void slice(String pod, int port, boolean ready, boolean serving, boolean terminating) {
        String uid = pod(pod).getMetadata().getUid();     // the API server's, as the controller copies it
        EndpointSlice slice = new EndpointSliceBuilder()
                .withNewMetadata().withName(SERVICE + "-" + pod).withNamespace(NS)
                    .addToLabels("kubernetes.io/service-name", SERVICE).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("grpc").withPort(port).withProtocol("TCP").endPort()
                .withEndpoints(new EndpointBuilder().withAddresses("127.0.0.1")
                        .withNewConditions().withReady(ready).withServing(serving).withTerminating(terminating)
                        .endConditions()
                        .withNewTargetRef().withKind("Pod").withName(pod).withNamespace(NS).withUid(uid)
                        .endTargetRef().build())
                .build();
        client.discovery().v1().endpointSlices().inNamespace(NS).resource(slice).createOr(op -> op.update());
    }

    /** Removes the pod's endpoint (its slice), as the EndpointSlice controller does once the pod is gone. */
    void removeSlice(String pod) {
        client.discovery().v1().endpointSlices().inNamespace(NS).withName(SERVICE + "-" + pod).delete();
    }

    /**
     * Every request made to the API server so far by a client other than {@link #client()}'s, as
     * {@code "METHOD /path?query"}, in order: what Rollcall asked for.
     */
    synchronized List<String> requests() throws InterruptedException {
        RecordedRequest request;
        while ((request = server.takeRequest(0, TimeUnit.MILLISECONDS)) != null) {
            String agent = request.getHeader("User-Agent");
            if (!TEST_AGENT.equals(agent)) {
                requests.add(request.getMethod() + " " + request.getPath());
            }
        }
        return List.copyOf(requests);
    }

    Pod pod(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    /** The pod's gate condition, as the API server holds it. */
    Optional<PodCondition> gate(String name) {
        Pod pod = pod(name);
        if (pod == null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getConditions().stream().filter(c -> GATE.equals(c.getType())).findFirst();
    }

    /** The status of {@code pod}'s condition {@code type}, if it has one. */
    static Optional<String> conditionStatus(Pod pod, String type) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType()))
                .map(PodCondition::getStatus).findFirst();
    }

    @Override
    public void close() {
        client.close();
        server.destroy();
    }
}
