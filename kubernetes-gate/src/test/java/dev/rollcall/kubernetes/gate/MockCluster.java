package dev.rollcall.kubernetes.gate;

import dev.rollcall.api.RollcallConfig;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
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
    private final LeaseRights leases;
    private final ApiServerLog api;
    private final KubernetesClient client;

    /** The User-Agent of the test's own client (the kubelet, the controllers): Rollcall's requests are the others. */
    static final String TEST_AGENT = "rollcall-test-cluster";

    private final List<String> requests = new ArrayList<>();

    private MockCluster(KubernetesMockServer server, LeaseRights leases, ApiServerLog api) {
        this.server = server;
        this.leases = leases;
        this.api = api;
        this.client = server.createClient(b -> b.editOrNewConfig().withUserAgent(TEST_AGENT).endConfig());
    }

    @SuppressWarnings("deprecation")    // the mock's own JUnit extension builds its context with this mapper
    static MockCluster start() {
        MockWebServer web = new MockWebServer();
        web.setHttp2ClearTextEnabled(false);
        ApiServerLog api = new ApiServerLog();
        LeaseRights leases = new LeaseRights(api);
        KubernetesMockServer server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), web,
                new HashMap<>(), leases, false);
        server.start(InetAddress.getLoopbackAddress(), 0);
        return new MockCluster(server, leases, api);
    }

    /** The API server's port (for a fault proxy in front of it). */
    int port() {
        return server.getPort();
    }

    /** The Role's rights on leases, which a test may take away. */
    LeaseRights leases() {
        return leases;
    }

    /** The holder of Lease {@code name}, or empty when there is none or it was released. */
    Optional<String> holder(String name) {
        Lease lease = client.leases().inNamespace(NS).withName(name).get();
        return lease == null || lease.getSpec() == null ? Optional.empty()
                : Optional.ofNullable(lease.getSpec().getHolderIdentity());
    }

    /** What the API server was asked to patch, and its lies. */
    ApiServerLog api() {
        return api;
    }

    /** A new client of the API server (the caller closes it). */
    KubernetesClient newClient() {
        return server.createClient();
    }

    /**
     * The keys of a resolver and gate on {@code master} (this cluster's {@link #url()}, or a fault
     * proxy in front of it): discovery of {@link #SERVICE}, policy semver {@code ^1.0.0}, the gate
     * {@link #GATE}; then {@code more} (which may replace any of them).
     */
    static RollcallConfig gateConfig(String master, Map<String, String> more) {
        Map<String, String> keys = new java.util.HashMap<>(Map.of(
                "rollcall.discovery.type", "k8s",
                "rollcall.discovery.k8s.service", SERVICE,
                "rollcall.discovery.k8s.namespace", NS,
                "rollcall.discovery.k8s.master", master,
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0.0",
                "rollcall.kubernetes.readiness-gate", GATE));
        keys.putAll(more);
        return RollcallConfig.of(keys);
    }

    /** {@link #gateConfig(String, Map)} on this cluster. */
    RollcallConfig gateConfig(Map<String, String> more) {
        return gateConfig(url(), more);
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

    /**
     * A pod that does not declare the gate (a database of the same namespace, say): Rollcall must never
     * write to it, whatever an EndpointSlice says.
     */
    void addPlainPod(String name) {
        client.pods().inNamespace(NS).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).addToLabels("app.kubernetes.io/name", "db")
                .endMetadata()
                .withNewSpec().addNewContainer().withName("db").withImage("db:1").endContainer().endSpec()
                .withNewStatus().withPhase("Running")
                    .addNewCondition().withType("ContainersReady").withStatus("True").endCondition()
                    .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .endStatus()
                .build()).create();
    }

    /**
     * An EndpointSlice written by hand, not by the controller: its endpoint at {@code port} names pod
     * {@code pod} in its {@code targetRef}, with {@code uid} (null: none).
     */
    void forgedSlice(String name, String pod, String uid, int port) {
        EndpointSlice slice = new EndpointSliceBuilder()
                .withNewMetadata().withName(name).withNamespace(NS)
                    .addToLabels("kubernetes.io/service-name", SERVICE).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("grpc").withPort(port).withProtocol("TCP").endPort()
                .withEndpoints(new EndpointBuilder().withAddresses("127.0.0.1")
                        .withNewConditions().withReady(true).withServing(true).withTerminating(false)
                        .endConditions()
                        .withNewTargetRef().withKind("Pod").withName(pod).withNamespace(NS).withUid(uid)
                        .endTargetRef().build())
                .build();
        client.discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
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
