package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.util.List;

/** EndpointSlices as the EndpointSlice controller writes them, built for tests. */
final class Slices {

    private Slices() {
    }

    /** An IPv4 slice of {@code service} with one port named {@code grpc}. */
    static EndpointSlice ipv4(String name, String service, int port, Endpoint... endpoints) {
        return slice(name, service, "IPv4", List.of(port("grpc", port)), endpoints);
    }

    /** An IPv6 slice of {@code service} with one port named {@code grpc}: the other half of a dual-stack service. */
    static EndpointSlice ipv6(String name, String service, int port, Endpoint... endpoints) {
        return slice(name, service, "IPv6", List.of(port("grpc", port)), endpoints);
    }

    /**
     * An endpoint with every condition given as the EndpointSlice controller sets it (null: unset),
     * of pod {@code pod} with UID {@code uid-<pod>}.
     */
    static Endpoint conditions(String address, String pod, Boolean ready, Boolean serving, Boolean terminating) {
        return new EndpointBuilder()
                .withAddresses(address)
                .withNewConditions().withReady(ready).withServing(serving).withTerminating(terminating).endConditions()
                .withNodeName("node-1")
                .withZone("zone-a")
                .withNewTargetRef().withKind("Pod").withName(pod).withNamespace("workers").withUid("uid-" + pod)
                .endTargetRef()
                .build();
    }

    static EndpointSlice slice(String name, String service, String addressType, List<EndpointPort> ports,
                               Endpoint... endpoints) {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                    .withName(name)
                    .addToLabels(KubernetesWorkerDiscovery.SERVICE_NAME_LABEL, service)
                    .addToLabels("endpointslice.kubernetes.io/managed-by", "rollcall-tests")
                .endMetadata()
                .withAddressType(addressType)
                .withPorts(ports)
                .withEndpoints(endpoints)
                .build();
    }

    static EndpointPort port(String name, int number) {
        return new EndpointPortBuilder().withName(name).withPort(number).withProtocol("TCP").build();
    }

    /** A ready endpoint of pod {@code pod} on node {@code node-1} in zone {@code zone-a}. */
    static Endpoint ready(String address, String pod) {
        return endpoint(address, pod, true, false);
    }

    static Endpoint endpoint(String address, String pod, Boolean ready, Boolean terminating) {
        return new EndpointBuilder()
                .withAddresses(address)
                .withNewConditions().withReady(ready).withServing(ready).withTerminating(terminating).endConditions()
                .withNodeName("node-1")
                .withZone("zone-a")
                .withNewTargetRef().withKind("Pod").withName(pod).withNamespace("workers").endTargetRef()
                .build();
    }
}
