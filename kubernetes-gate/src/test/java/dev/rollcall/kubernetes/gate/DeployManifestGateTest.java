package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/kubernetes} keeps the gate honest: {@code rollcall serve}'s account is granted exactly
 * what the discovery backend, the gate and its Lease election ask the API server for, no more, no
 * less ({@code rollcall.yaml}'s Roles; with {@code pod-deletion-cost}, {@code rollcall-deletion-cost.yaml}'s
 * one more right); the ConfigMap's keys configure the gate; the workers' Deployment waits for the
 * condition the ConfigMap names, with {@code maxSurge: 1, maxUnavailable: 0}; and docs/kubernetes.md
 * shows these very files and what kubectl prints.
 */
class DeployManifestGateTest {

    private static final Path DEPLOY = Path.of("..", "deploy", "kubernetes").toAbsolutePath().normalize();
    private static final Path DOCS = Path.of("..", "docs", "kubernetes.md").toAbsolutePath().normalize();
    private static final Duration WITHIN = Duration.ofSeconds(30);
    /** /api/v1/namespaces/NS/RESOURCE[/NAME[/SUBRESOURCE]] or /apis/GROUP/VERSION/namespaces/NS/...; then the query. */
    private static final Pattern NAMESPACED = Pattern.compile(
            "^/(?:api/v1|apis/([^/]+)/[^/]+)/namespaces/([^/]+)/([^/?]+)(?:/([^/?]+))?(?:/([^/?]+))?(?:\\?(.*))?$");

    /** A grant or a use: verb on resource (with its subresource) of group in namespace. */
    record Access(String namespace, String group, String resource, String verb) {
        @Override
        public String toString() {
            return verb + " " + (group.isEmpty() ? "" : group + "/") + resource + " in " + namespace;
        }
    }

    @Test
    void theRolesGrantExactlyWhatDiscoveryTheGateAndItsElectionAskFor() throws Exception {
        List<HasMetadata> objects = manifest("rollcall.yaml");
        Set<Access> used = run(properties(objects), false);
        assertThat(used).as("what rollcall serve asked for, against rollcall-discovery and rollcall-gate")
                .containsExactlyElementsOf(grants(role(objects, "rollcall-discovery"), role(objects, "rollcall-gate")));
    }

    @Test
    void withPodDeletionCostTheSeparateRoleGrantsExactlyTheOneMoreRightItUses() throws Exception {
        List<HasMetadata> objects = manifest("rollcall.yaml");
        List<HasMetadata> costs = manifest("rollcall-deletion-cost.yaml");
        Map<String, String> keys = properties(objects);
        keys.put("rollcall.kubernetes.pod-deletion-cost", "true");
        Set<Access> used = run(keys, true);
        assertThat(used).containsExactlyElementsOf(grants(role(objects, "rollcall-discovery"),
                role(objects, "rollcall-gate"), role(costs, "rollcall-deletion-cost")));
        RoleBinding binding = costs.stream().filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
                .findFirst().orElseThrow();
        assertThat(binding.getRoleRef().getName()).isEqualTo("rollcall-deletion-cost");
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> assertThat(s.getName()).isEqualTo(
                one(objects, Deployment.class).getSpec().getTemplate().getSpec().getServiceAccountName()));
    }

    @Test
    void theWorkersDeploymentWaitsForTheConditionTheConfigMapNamesAndNeverTakesAPodDownFirst() throws IOException {
        Map<String, String> keys = properties(manifest("rollcall.yaml"));
        List<HasMetadata> workers = manifest("workers-deployment.yaml");
        Deployment deployment = one(workers, Deployment.class);
        var pod = deployment.getSpec().getTemplate();
        assertThat(pod.getSpec().getReadinessGates()).singleElement()
                .satisfies(g -> assertThat(g.getConditionType()).isEqualTo(keys.get("rollcall.kubernetes.readiness-gate")));
        assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal()).isEqualTo(1);
        assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal()).isZero();
        // The pods are the ones rollcall.yaml follows: its service, its pod selector, its port name.
        var service = one(workers, io.fabric8.kubernetes.api.model.Service.class);
        assertThat(service.getMetadata().getName()).isEqualTo(keys.get("rollcall.discovery.k8s.service"));
        assertThat(service.getSpec().getSelector()).isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
        assertThat(keys.get("rollcall.discovery.k8s.pod-selector"))
                .isEqualTo(service.getSpec().getSelector().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining(",")));
        assertThat(service.getSpec().getPorts()).extracting(p -> p.getName()).contains(keys.get("rollcall.discovery.k8s.port"));
        assertThat(pod.getMetadata().getLabels()).containsKey("app.kubernetes.io/version");
        assertThat(service.getMetadata().getNamespace()).isEqualTo(one(manifest("rollcall.yaml"), ConfigMap.class)
                .getMetadata().getNamespace());
    }

    @Test
    void theDocsPageShowsTheseManifestsAndWhatKubectlPrints() throws IOException {
        String docs = Files.readString(DOCS, StandardCharsets.UTF_8);
        String workers = Files.readString(DEPLOY.resolve("workers-deployment.yaml"), StandardCharsets.UTF_8);
        String deployment = workers.substring(workers.indexOf("apiVersion: apps/v1"), workers.indexOf("---"));
        assertThat(docs).as("docs/kubernetes.md shows workers-deployment.yaml's Deployment").contains(deployment);
        String rollcall = Files.readString(DEPLOY.resolve("rollcall.yaml"), StandardCharsets.UTF_8);
        String gateRole = rollcall.substring(rollcall.indexOf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
                + "metadata:\n  name: rollcall-gate"));
        gateRole = gateRole.substring(0, gateRole.indexOf("---"));
        assertThat(docs).as("docs/kubernetes.md shows the gate's Role").contains(gateRole);
        String costs = Files.readString(DEPLOY.resolve("rollcall-deletion-cost.yaml"), StandardCharsets.UTF_8);
        assertThat(docs).contains(costs.substring(costs.indexOf("apiVersion"), costs.indexOf("---")));
        // The first pod of a rejected rollout, as RolloutStoriesTest leaves it.
        Pod held = new PodBuilder().withNewMetadata().withName("compute-workers-7d9c-x2x4q").endMetadata()
                .withNewSpec().addNewReadinessGate().withConditionType(MockCluster.GATE).endReadinessGate().endSpec()
                .withNewStatus()
                    .addNewCondition().withType("ContainersReady").withStatus("True").endCondition()
                    .addNewCondition().withType("Ready").withStatus("False").endCondition()
                    .addNewCondition().withType(MockCluster.GATE).withStatus("False").endCondition()
                .endStatus().build();
        assertThat(docs).contains(KubectlView.readinessGates(held));
    }

    /**
     * Runs the resolver and the gate on {@code keys} against the mock API server until they have done
     * their whole job (the pods' conditions set, a cost if asked, discovery's sign of life), and
     * fabric8's leader election on the Lease {@code rollcall.kubernetes.lease.name} (acquire, renew,
     * release); returns the RBAC checks of every request they made.
     */
    private static Set<Access> run(Map<String, String> keys, boolean costs) throws Exception {
        try (MockCluster cluster = MockCluster.start(); WorkerFleet fleet = WorkerFleet.start("1.4.0", "2.0.0")) {
            String namespace = MockCluster.NS;
            cluster.addGatedPod("w-good", "1.4.0", fleet.worker(0).endpoint().port());
            cluster.addGatedPod("w-bad", "2.0.0", fleet.worker(1).endpoint().port());
            // Their endpoints do not serve: the pods wait for the gate, as Kubernetes holds them.
            Map<String, String> run = new HashMap<>(keys);
            // Instead of the pod's service account (the mock takes no credentials); the requests are the same.
            run.put("rollcall.discovery.k8s.master", cluster.url());
            run.put("rollcall.discovery.k8s.namespace", namespace);
            run.put("rollcall.discovery.k8s.keepalive-time", "100ms");
            RollcallConfig config = RollcallConfig.of(run);
            try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
                 KubernetesGate gate = KubernetesGate.start(resolver, config).orElseThrow()) {
                await().atMost(WITHIN).ignoreExceptions().until(() ->
                        cluster.gate("w-good").orElseThrow().getStatus().equals("True")
                                && cluster.gate("w-bad").orElseThrow().getStatus().equals("False")
                                && (!costs || "-100".equals(cluster.pod("w-bad").getMetadata().getAnnotations()
                                        .get("controller.kubernetes.io/pod-deletion-cost")))
                                && cluster.requests().contains("GET /version"));
            }
            // After the gate: a gate that elects holds the Lease until it closes.
            elect(cluster, namespace, config);
            Set<Access> used = new TreeSet<>(Comparator.comparing(Access::toString));
            for (String request : cluster.requests()) {
                Access access = access(request);
                if (access != null) {
                    used.add(access);
                }
            }
            return used;
        }
    }

    /** fabric8's LeaseLock as the gate's election runs it: reads, creates, renews (a patch), releases on cancel. */
    private static void elect(MockCluster cluster, String namespace, RollcallConfig config) throws Exception {
        String lease = config.settings().get(KubernetesGateKeys.LEASE_NAME);
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withMasterUrl(cluster.url()).build()).build()) {
            CountDownLatch leading = new CountDownLatch(1);
            CompletableFuture<?> election = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
                    .withName("rollcall-gate").withLock(new LeaseLock(namespace, lease, "replica-a"))
                    .withLeaseDuration(Duration.ofSeconds(15)).withRenewDeadline(Duration.ofSeconds(10))
                    .withRetryPeriod(Duration.ofMillis(50)).withReleaseOnCancel(true)
                    .withLeaderCallbacks(new LeaderCallbacks(leading::countDown, () -> { }, id -> { }))
                    .build()).build().start();
            assertThat(leading.await(WITHIN.toSeconds(), TimeUnit.SECONDS)).as("replica-a leads").isTrue();
            await().atMost(WITHIN).until(() -> cluster.requests().stream()
                    .filter(r -> r.contains("/leases") && !r.startsWith("GET ")).count() >= 2);   // taken, then renewed
            election.cancel(true);    // releases the lease: one more patch
        }
    }

    /** The RBAC check an API server makes for {@code request} ("PATCH /api/..."), or null for a non-resource path. */
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
        String resource = m.group(3) + (m.group(5) == null ? "" : "/" + m.group(5));
        String query = m.group(6) == null ? "" : m.group(6);
        boolean watch = query.matches("(?:.*&)?watch=(?:true|1)(?:&.*)?");
        String verb = switch (method) {
            case "GET" -> watch ? "watch" : named ? "get" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
        return new Access(m.group(2), group, resource, verb);
    }

    /** Every (group, resource, verb) the Roles grant, each in its namespace. */
    static List<Access> grants(Role... roles) {
        Set<Access> grants = new TreeSet<>(Comparator.comparing(Access::toString));
        for (Role role : roles) {
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
        }
        return new ArrayList<>(grants);
    }

    static List<HasMetadata> manifest(String file) throws IOException {
        try (InputStream in = Files.newInputStream(DEPLOY.resolve(file))) {
            Object parsed = new KubernetesSerialization().unmarshal(in);
            List<HasMetadata> objects = new ArrayList<>();
            if (parsed instanceof List<?> list) {
                list.forEach(o -> objects.add((HasMetadata) o));
            } else {
                objects.add((HasMetadata) parsed);
            }
            return objects;
        }
    }

    private static Role role(List<HasMetadata> objects, String name) {
        return objects.stream().filter(Role.class::isInstance).map(Role.class::cast)
                .filter(r -> r.getMetadata().getName().equals(name)).findFirst().orElseThrow();
    }

    private static <T> T one(List<HasMetadata> objects, Class<T> type) {
        List<T> found = objects.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(found).as(type.getSimpleName()).hasSize(1);
        return found.get(0);
    }

    private static Map<String, String> properties(List<HasMetadata> objects) throws IOException {
        Properties properties = new Properties();
        properties.load(new StringReader(one(objects, ConfigMap.class).getData().get("rollcall.properties")));
        return properties.stringPropertyNames().stream()
                .collect(Collectors.toMap(k -> k, properties::getProperty, (a, b) -> a, HashMap::new));
    }
}
