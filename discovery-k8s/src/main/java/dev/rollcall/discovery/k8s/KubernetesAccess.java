package dev.rollcall.discovery.k8s;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.Objects;
import java.util.concurrent.ExecutorService;

/**
 * The cluster, namespace and service the {@code k8s} discovery backend's keys
 * ({@code rollcall.discovery.k8s.*}) name, for a component beside the backend that must reach the
 * same API server as the same account: the readiness gate of {@code rollcall serve}
 * ({@code rollcall-kubernetes-gate}). One reading of the keys: the same checks, defaults and errors
 * as the backend's.
 *
 * <p>Immutable and thread-safe. {@link #fromConfig} reads local files only (a kubeconfig, the
 * pod's namespace file) and never contacts the API server; {@link #newClient} neither, until the
 * client is used.
 */
public final class KubernetesAccess {

    private final KubernetesSettings settings;

    private KubernetesAccess(KubernetesSettings settings) {
        this.settings = settings;
    }

    /**
     * The access the {@code rollcall.discovery.k8s.*} keys of {@code config} describe.
     *
     * @throws ConfigurationException naming the key and value at fault, as the backend would
     */
    public static KubernetesAccess fromConfig(RollcallConfig config) {
        Objects.requireNonNull(config, "config");
        return new KubernetesAccess(new KubernetesWorkerDiscoveryProvider()
                .options(config.settings().scope("rollcall.discovery.k8s.")));
    }

    /** The namespace of the service (and of its pods). */
    public String namespace() {
        return settings.namespace();
    }

    /** The service whose EndpointSlices are the workers. */
    public String service() {
        return settings.service();
    }

    /**
     * A new client of this cluster in {@link #namespace()}, with the backend's request timeout and
     * fabric8's JDK transport, running its HTTP callbacks and tasks on {@code executor} (give it
     * named threads). The caller closes the client, then shuts the executor down.
     */
    public KubernetesClient newClient(ExecutorService executor) {
        Objects.requireNonNull(executor, "executor");
        return new KubernetesClientBuilder()
                .withConfig(settings.access().toConfig(settings.namespace(), settings.requestTimeout(),
                        settings.timings().reconnectInterval()))
                .withHttpClientFactory(new NamedThreadsHttpClientFactory(executor))
                .withTaskExecutor(executor)
                .build();
    }

    /**
     * Whether the backend watches the namespace's pods ({@code version-label} is not {@code none}):
     * only then does it see pods that wait for their readiness gates, and take them as candidates.
     */
    public boolean watchesPods() {
        return settings.versionLabel() != null;
    }

    /** For logs; never contains credentials. */
    public String describe() {
        return settings.access().describe() + ", namespace " + settings.namespace();
    }

    @Override
    public String toString() {
        return "KubernetesAccess[" + describe() + "]";
    }
}
