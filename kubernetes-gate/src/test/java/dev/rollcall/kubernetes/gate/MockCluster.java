package dev.rollcall.kubernetes.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * fabric8's Kubernetes mock API server in CRUD mode on loopback, holding what a cluster holds for a
 * Deployment of workers: pods (with the readiness gate in their spec) and the service's
 * EndpointSlices, one per pod (each loopback worker listens on its own port). The test plays the
 * kubelet and the EndpointSlice controller through {@link #client()}.
 */
final class MockCluster implements AutoCloseable {

    static final String NS = "compute";
    static final String SERVICE = "compute-workers";
    static final String GATE = "rollcall.dev/compatible";

    private final KubernetesMockServer server;
    private final LeaseRights rights;
    private final KubernetesClient client;

    private MockCluster(KubernetesMockServer server, LeaseRights rights) {
        this.server = server;
        this.rights = rights;
        this.client = server.createClient();
    }

    @SuppressWarnings("deprecation")    // the mock's own JUnit extension builds its context with this mapper
    static MockCluster start() {
        MockWebServer web = new MockWebServer();
        web.setHttp2ClearTextEnabled(false);
        LeaseRights rights = new LeaseRights();
        KubernetesMockServer server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), web,
                new HashMap<>(), rights, false);
        server.start(InetAddress.getLoopbackAddress(), 0);
        return new MockCluster(server, rights);
    }

    /** The API server's port, for a fault proxy in front of it. */
    int port() {
        return server.getPort();
    }

    /**
     * From now on every request on {@code coordination.k8s.io} (leases) is refused 403 Forbidden, as
     * the API server refuses a service account whose Role lacks them; the rest is served as before.
     */
    void forbidLeases() {
        rights.forbidden = true;
    }

    /** Requests on {@code coordination.k8s.io} so far, refused or not. */
    int leaseRequests() {
        return rights.requests.get();
    }

    /** The Lease {@code name} in the namespace, or null. */
    Lease lease(String name) {
        return client.leases().inNamespace(NS).withName(name).get();
    }

    /** The holder of Lease {@code name}, or empty when there is none or it was released. */
    Optional<String> holder(String name) {
        Lease lease = lease(name);
        return lease == null || lease.getSpec() == null ? Optional.empty()
                : Optional.ofNullable(lease.getSpec().getHolderIdentity());
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
        String uid = pod(pod).getMetadata().getUid();     // the API server's, as the controller copies it
        EndpointSlice slice = new EndpointSliceBuilder()
                .withNewMetadata().withName(SERVICE + "-" + pod).withNamespace(NS)
                    .addToLabels("kubernetes.io/service-name", SERVICE).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("grpc").withPort(port).withProtocol("TCP").endPort()
                .withEndpoints(new EndpointBuilder().withAddresses("127.0.0.1")
                        .withNewConditions().withReady(serving).withServing(serving).withTerminating(false)
                        .endConditions()
                        .withNewTargetRef().withKind("Pod").withName(pod).withNamespace(NS).withUid(uid)
                        .endTargetRef().build())
                .build();
        client.discovery().v1().endpointSlices().inNamespace(NS).resource(slice).createOr(op -> op.update());
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

    @Override
    public void close() {
        client.close();
        server.destroy();
    }

    /** The CRUD API server with a Role the test can take the leases out of. */
    private static final class LeaseRights extends KubernetesCrudDispatcher {

        private final AtomicInteger requests = new AtomicInteger();
        private volatile boolean forbidden;

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = String.valueOf(request.getPath());
            if (path.startsWith("/apis/coordination.k8s.io/")) {
                requests.incrementAndGet();
                if (forbidden) {
                    // The API server's own wording for a missing RBAC rule.
                    return new MockResponse().setResponseCode(403).setHeader("Content-Type", "application/json")
                            .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                                    + "\"message\":\"leases.coordination.k8s.io is forbidden: User"
                                    + " \\\"system:serviceaccount:compute:rollcall\\\" cannot "
                                    + verb(request) + " resource \\\"leases\\\" in API group"
                                    + " \\\"coordination.k8s.io\\\" in the namespace \\\"" + NS + "\\\"\","
                                    + "\"reason\":\"Forbidden\",\"code\":403}");
                }
            }
            return super.dispatch(request);
        }

        private static String verb(RecordedRequest request) {
            switch (request.getMethod()) {
                case "POST":
                    return "create";
                case "PATCH":
                    return "patch";
                case "PUT":
                    return "update";
                default:
                    return "get";
            }
        }
    }
}
