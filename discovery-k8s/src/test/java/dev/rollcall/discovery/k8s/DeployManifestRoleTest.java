package dev.rollcall.discovery.k8s;

import static dev.rollcall.discovery.k8s.Slices.port;
import static dev.rollcall.discovery.k8s.Slices.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.CandidateRecorder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Role {@code rollcall-discovery} of {@code deploy/kubernetes/rollcall.yaml} grants exactly what the backend asks the API
 * server for, no more: the backend runs on the manifest's own {@code rollcall.properties} against the
 * mock API server until it has done all of its job (listed and followed the service's slices and
 * the pods' version labels, asked for its sign of life), and every request it made, turned into the
 * RBAC verb, resource and namespace an API server would check, must be one the Role grants, and
 * every grant must have been used. A request the backend starts making (a new resource, a
 * {@code get}) fails this test until the manifest says so; so does a grant nothing needs. And the
 * manifest's whole {@code rollcall.properties} configures the resolver {@code rollcall serve} builds.
 */
class DeployManifestRoleTest {

    private static final Path MANIFEST = Path.of("..", "deploy", "kubernetes", "rollcall.yaml").toAbsolutePath()
            .normalize();
    private static final String PREFIX = KubernetesWorkerDiscoveryTest.PREFIX;
    /** A namespaced request: /api/v1/namespaces/NS/RESOURCE[/NAME] or /apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME]. */
    private static final Pattern NAMESPACED = Pattern.compile(
            "^/(?:api/v1|apis/([^/]+)/[^/]+)/namespaces/([^/]+)/([^/?]+)(?:/([^/?]+))?(?:\\?(.*))?$");
    /** Paths open to every account (the cluster's system:public-info-viewer role), needing no rule here. */
    private static final Set<String> PUBLIC_PATHS = Set.of("/version", "/version/", "/healthz", "/livez", "/readyz");

    private MockKubernetesApi api;
    private final List<KubernetesWorkerDiscovery> started = new ArrayList<>();

    /** A grant or a use: verb on resource of group in namespace. */
    record Access(String namespace, String group, String resource, String verb) {
        @Override
        public String toString() {
            return verb + " " + (group.isEmpty() ? "" : group + "/") + resource + " in " + namespace;
        }
    }

    @BeforeAll
    static void warmUp() {
        MockKubernetesApi.warmUp();
    }

    @BeforeEach
    void startApi() {
        api = MockKubernetesApi.start();
    }

    @AfterEach
    void stopAll() {
        api.close();    // first: see KubernetesWorkerDiscoveryTest.stopAll
        started.forEach(KubernetesWorkerDiscovery::close);
    }

    private static List<HasMetadata> manifest() throws IOException {
        try (InputStream in = Files.newInputStream(MANIFEST)) {
            Object parsed = new KubernetesSerialization().unmarshal(in);
            List<HasMetadata> objects = new ArrayList<>();
            ((List<?>) parsed).forEach(o -> objects.add((HasMetadata) o));
            return objects;
        }
    }

    private static <T> T one(List<HasMetadata> objects, Class<T> type) {
        List<T> found = objects.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(found).as("%s in %s", type.getSimpleName(), MANIFEST).hasSize(1);
        return found.get(0);
    }

    @Test
    void theRoleGrantsExactlyWhatTheBackendAsksForOnTheManifestsConfiguration() throws IOException {
        List<HasMetadata> objects = manifest();
        // In the pod, the namespace is the pod's own: the Deployment's.
        String namespace = one(objects, Deployment.class).getMetadata().getNamespace();
        Map<String, String> keys = properties(one(objects, ConfigMap.class));
        assertThat(keys).containsEntry("rollcall.discovery.type", KubernetesWorkerDiscoveryProvider.TYPE);
        String service = keys.get(PREFIX + KubernetesWorkerDiscoveryProvider.SERVICE);
        Map<String, String> workerLabels = selector(keys.get(PREFIX + KubernetesWorkerDiscoveryProvider.POD_SELECTOR));
        String versionLabel = KubernetesKeys.VERSION_LABEL.defaultValue();
        assertThat(keys).as("the manifest follows the pods' version label").doesNotContainKey(KubernetesKeys.VERSION_LABEL.name());

        createPod(namespace, "w-1", workerLabels, versionLabel, "1.0.0");
        create(namespace, slice("workers-a", service, "IPv4", List.of(port("grpc", 7001)),
                endpoint("127.0.0.2", "w-1", namespace)));

        Map<String, String> run = new HashMap<>(keys);
        // Instead of the pod's service account (the mock takes no credentials); the requests are the same.
        run.put(PREFIX + KubernetesWorkerDiscoveryProvider.MASTER, api.url());
        run.put(PREFIX + KubernetesWorkerDiscoveryProvider.NAMESPACE, namespace);
        run.put(PREFIX + KubernetesWorkerDiscoveryProvider.KEEPALIVE_TIME, "100ms");
        KubernetesWorkerDiscovery discovery = new KubernetesWorkerDiscovery(new KubernetesWorkerDiscoveryProvider()
                .options(Settings.of(run).scope(PREFIX)));
        started.add(discovery);
        CandidateRecorder listener = new CandidateRecorder();
        discovery.start(listener);

        // Its whole job: the slices listed, then followed; the pods' versions listed, then followed; a sign of life.
        await().atMost(KubernetesWorkerDiscoveryTest.WITHIN)
                .until(() -> Map.of("grpc://127.0.0.2:7001", "1.0.0").equals(versions(listener.latest())));
        create(namespace, slice("workers-b", service, "IPv4", List.of(port("grpc", 7001)),
                endpoint("127.0.0.3", "w-2", namespace)));
        createPod(namespace, "w-2", workerLabels, versionLabel, "1.0.0");
        await().atMost(KubernetesWorkerDiscoveryTest.WITHIN).until(() -> Map.of("grpc://127.0.0.2:7001", "1.0.0",
                "grpc://127.0.0.3:7001", "1.0.0").equals(versions(listener.latest())));
        await().atMost(KubernetesWorkerDiscoveryTest.WITHIN)
                .until(() -> api.requests().stream().anyMatch(r -> r.equals("GET /version")));
        assertThat(listener.errors()).isEmpty();

        Set<Access> used = new TreeSet<>(java.util.Comparator.comparing(Access::toString));
        Set<String> unscoped = new TreeSet<>();
        for (String request : api.requests()) {
            Access access = access(request);
            if (access != null) {
                used.add(access);
            } else {
                unscoped.add(request.substring(request.indexOf(' ') + 1));
            }
        }
        Set<Access> granted = new TreeSet<>(java.util.Comparator.comparing(Access::toString));
        // The manifest's other Roles are the readiness gate's (kubernetes-gate's DeployManifestGateTest).
        granted.addAll(grants(objects.stream().filter(Role.class::isInstance).map(Role.class::cast)
                .filter(r -> r.getMetadata().getName().equals("rollcall-discovery")).findFirst().orElseThrow()));
        assertThat(used).as("what the backend asked for (%s) against the Role", api.requests())
                .containsExactlyElementsOf(granted);
        assertThat(PUBLIC_PATHS).as("requests outside any namespace need a ClusterRole").containsAll(unscoped);
    }

    @Test
    void theManifestsConfigurationStartsTheResolverRollcallServeRunsAndFindsTheWorkers() throws Exception {
        List<HasMetadata> objects = manifest();
        String namespace = one(objects, Deployment.class).getMetadata().getNamespace();
        Map<String, String> keys = properties(one(objects, ConfigMap.class));
        String service = keys.get(PREFIX + KubernetesWorkerDiscoveryProvider.SERVICE);
        Map<String, String> workerLabels = selector(keys.get(PREFIX + KubernetesWorkerDiscoveryProvider.POD_SELECTOR));
        try (WorkerFleet fleet = WorkerFleet.start("1.0.0")) {
            WorkerEndpoint worker = fleet.worker(0).endpoint();
            createPod(namespace, "w-1", workerLabels, KubernetesKeys.VERSION_LABEL.defaultValue(), "1.0.0");
            create(namespace, slice("workers-a", service, "IPv4", List.of(port("grpc", worker.port())),
                    endpoint(worker.host(), "w-1", namespace)));
            Map<String, String> run = new HashMap<>(keys);
            run.put(PREFIX + KubernetesWorkerDiscoveryProvider.MASTER, api.url());
            run.put(PREFIX + KubernetesWorkerDiscoveryProvider.NAMESPACE, namespace);

            // As rollcall serve builds it: the whole file, rollcall.serve.* included, through core's key checks.
            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(run))) {
                await().atMost(KubernetesWorkerDiscoveryTest.WITHIN).untilAsserted(() -> assertThat(resolver.workers())
                        .extracting(w -> w.endpoint().url()).containsExactly(worker.url()));
            }
        }
    }

    /** The RBAC check an API server makes for {@code request} ("GET /apis/..."), or null for a non-resource path. */
    static Access access(String request) {
        String method = request.substring(0, request.indexOf(' '));
        String path = request.substring(request.indexOf(' ') + 1);
        Matcher m = NAMESPACED.matcher(path);
        if (!m.matches()) {
            assertThat(path).as("a request for a resource outside a namespace: a Role cannot grant it")
                    .doesNotStartWith("/api/").doesNotStartWith("/apis/");
            return null;
        }
        String group = m.group(1) == null ? "" : m.group(1);
        boolean named = m.group(4) != null;
        String query = m.group(5) == null ? "" : m.group(5);
        boolean watch = query.matches("(?:.*&)?watch=(?:true|1)(?:&.*)?");
        String verb = switch (method) {
            case "GET" -> watch ? "watch" : named ? "get" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
        return new Access(m.group(2), group, m.group(3), verb);
    }

    /** Every (group, resource, verb) the Role grants, in its namespace. */
    static List<Access> grants(Role role) {
        List<Access> grants = new ArrayList<>();
        for (PolicyRule rule : role.getRules()) {
            assertThat(rule.getResourceNames()).as("grants on all of a resource's objects").isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        grants.add(new Access(role.getMetadata().getNamespace(), group, resource, verb));
                    }
                }
            }
        }
        return grants;
    }

    private static Map<String, String> properties(ConfigMap config) throws IOException {
        Properties properties = new Properties();
        properties.load(new StringReader(config.getData().get("rollcall.properties")));
        return properties.stringPropertyNames().stream().collect(Collectors.toMap(k -> k, properties::getProperty));
    }

    private static Map<String, String> selector(String pairs) {
        Map<String, String> labels = new HashMap<>();
        if (pairs != null) {
            for (String pair : pairs.split(",")) {
                String[] kv = pair.split("=", 2);
                labels.put(kv[0].strip(), kv[1].strip());
            }
        }
        return labels;
    }

    private void createPod(String namespace, String name, Map<String, String> labels, String versionLabel,
                           String version) {
        Map<String, String> all = new HashMap<>(labels);
        all.put(versionLabel, version);
        Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(namespace).withLabels(all).endMetadata()
                .withNewSpec().addNewContainer().withName("worker").withImage("worker:1").endContainer().endSpec()
                .build();
        api.client().pods().inNamespace(namespace).resource(pod).create();
    }

    private void create(String namespace, EndpointSlice slice) {
        api.client().discovery().v1().endpointSlices().inNamespace(namespace).resource(slice).create();
    }

    private static Endpoint endpoint(String address, String pod, String namespace) {
        return new EndpointBuilder().withAddresses(address)
                .withNewConditions().withReady(true).withServing(true).withTerminating(false).endConditions()
                .withNewTargetRef().withKind("Pod").withName(pod).withNamespace(namespace).endTargetRef()
                .build();
    }

    private static Map<String, String> versions(Set<WorkerEndpoint> set) {
        return PodVersionLabelTest.versions(set);
    }
}
