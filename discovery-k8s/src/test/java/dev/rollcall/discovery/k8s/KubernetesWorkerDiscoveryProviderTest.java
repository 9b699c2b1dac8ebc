package dev.rollcall.discovery.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.local.UnresponsiveWorker;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration: every key checked in {@code create()}, the namespace and cluster found without the network. */
class KubernetesWorkerDiscoveryProviderTest {

    private static final String PREFIX = "rollcall.discovery.k8s.";
    private static final String TOKEN = "s3cr3t-token-value";

    private static final String KUBECONFIG = """
            apiVersion: v1
            kind: Config
            clusters:
            - name: local
              cluster:
                server: https://127.0.0.1:6443
            users:
            - name: robot
              user:
                token: %s
            contexts:
            - name: team-a
              context: {cluster: local, user: robot, namespace: team-a}
            - name: team-b
              context: {cluster: local, user: robot, namespace: team-b}
            - name: bare
              context: {cluster: local, user: robot}
            current-context: team-a
            """.formatted(TOKEN);

    @TempDir
    Path dir;

    /** Not in a pod, no KUBECONFIG, an empty home: nothing to fall back on unless a test adds it. */
    private HostEnvironment nowhere() {
        return new HostEnvironment(dir.resolve("no-service-account"), name -> null, dir.resolve("home"));
    }

    @Test
    void requiresTheServiceNamingItsKey() {
        assertThatThrownBy(() -> options(nowhere(), Map.of("namespace", "ns", "master", "http://127.0.0.1:8001")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "service"))
                .hasMessageContaining(PREFIX + "service");
    }

    @Test
    void rejectsAServiceNameThatKubernetesWouldNotAccept() {
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "Compute_Workers"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "service")
                .hasMessageContaining("'Compute_Workers'");
    }

    @Test
    void rejectsAPortThatIsNeitherANumberFrom1To65535NorAPortName() {
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "port", "70000"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "port")
                .hasMessageContaining("'70000'");
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "port", "gRPC port"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "port")
                .hasMessageContaining("'gRPC port'");
    }

    @Test
    void rejectsASchemeOtherThanGrpcOrGrpcs() {
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "scheme", "https"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "scheme")
                .hasMessageContaining("grpc (plaintext) or grpcs (TLS)");
    }

    @Test
    void readsTheIpFamilyCaseInsensitivelyAndRejectsOthersNamingTheChoices() {
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute"))).ipFamily())
                .isEqualTo(IpFamily.PREFER_IPV4);
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute", "ip-family", "ipv6"))).ipFamily())
                .isEqualTo(IpFamily.IPV6);
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute", "ip-family", "PreferIPv6"))).ipFamily())
                .isEqualTo(IpFamily.PREFER_IPV6);
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "ip-family", "dual"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "ip-family").hasMessageContaining("'dual'")
                .hasMessageContaining("IPv4, IPv6, PreferIPv4 or PreferIPv6");
    }

    @Test
    void rejectsAResyncBelowOneSecondButAcceptsZeroToTurnItOff() {
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "resync", "500ms"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "resync")
                .hasMessageContaining("at least 1s");
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute", "resync", "0s"))).resync()).isZero();
    }

    @Test
    void readsKeepaliveTimeAndRejectsOneBelow100Ms() {
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute"))).silenceBound())
                .as("the README's bound for a silent API server").isEqualTo(java.time.Duration.ofSeconds(15));
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "keepalive-time", "50ms"))))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "keepalive-time").hasMessageContaining("100ms");
    }

    @Test
    void readsTheVersionLabelWithItsDefaultAndNoneTurnsItOff() {
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute"))).versionLabel())
                .isEqualTo("app.kubernetes.io/version");
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute", "version-label", "example.com/build")))
                .versionLabel()).isEqualTo("example.com/build");
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute", "version-label", "none"))).versionLabel())
                .isNull();
    }

    @Test
    void rejectsAVersionLabelThatIsNoLabelKeyNamingItsKey() {
        for (String bad : List.of("app version", "/version", "Example.com/version", "a/b/c", "x".repeat(64),
                "-version")) {
            assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "version-label", bad))))
                    .as(bad).isInstanceOfSatisfying(ConfigurationException.class,
                            e -> assertThat(e.key()).isEqualTo(PREFIX + "version-label"))
                    .hasMessageContaining("a Kubernetes label key");
        }
    }

    @Test
    void readsThePodSelectorAndRejectsOneThatIsNoEqualitySelector() {
        assertThat(options(nowhere(), withMaster(Map.of("service", "compute",
                "pod-selector", "app.kubernetes.io/name=workers, tier=compute"))).podSelector())
                .isEqualTo(Map.of("app.kubernetes.io/name", "workers", "tier", "compute"));
        for (String bad : List.of("app", "app!=workers", "app=a,app=b", "app=has space", "app in (a,b)")) {
            assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "pod-selector", bad))))
                    .as(bad).isInstanceOfSatisfying(ConfigurationException.class,
                            e -> assertThat(e.key()).isEqualTo(PREFIX + "pod-selector"))
                    .hasMessageContaining("key=value pairs");
        }
        assertThatThrownBy(() -> options(nowhere(), withMaster(Map.of("service", "compute", "version-label", "none",
                "pod-selector", "app=workers"))))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "pod-selector"))
                .hasMessageContaining(PREFIX + "version-label=none");
    }

    @Test
    void rejectsAMasterThatIsNotAnHttpUrl() {
        assertThatThrownBy(() -> options(nowhere(), Map.of("service", "compute", "namespace", "ns",
                "master", "127.0.0.1:6443")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "master")
                .hasMessageContaining("'127.0.0.1:6443'");
    }

    @Test
    void rejectsAKubeconfigThatDoesNotExist() {
        Path missing = dir.resolve("missing-kubeconfig");
        assertThatThrownBy(() -> options(nowhere(), Map.of("service", "compute", "kubeconfig", missing.toString())))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "kubeconfig"))
                .hasMessageContaining("does not exist");
    }

    @Test
    void takesTheNamespaceFromTheKubeconfigContext() throws IOException {
        Path kubeconfig = write("kubeconfig", KUBECONFIG);

        KubernetesSettings current = options(nowhere(), Map.of("service", "compute",
                "kubeconfig", kubeconfig.toString()));
        KubernetesSettings chosen = options(nowhere(), Map.of("service", "compute",
                "kubeconfig", kubeconfig.toString(), "context", "team-b"));

        assertThat(current.namespace()).isEqualTo("team-a");
        assertThat(chosen.namespace()).isEqualTo("team-b");
        assertThat(chosen.access().kind()).isEqualTo(ClusterAccess.Kind.KUBECONFIG);
    }

    @Test
    void usesTheKubeconfigKubectlWouldUseWhenNothingElseIsConfigured() throws IOException {
        Path kubeconfig = write("home/.kube/config", KUBECONFIG);

        KubernetesSettings options = options(nowhere(), Map.of("service", "compute"));

        assertThat(options.access().kubeconfig()).isEqualTo(kubeconfig);
        assertThat(options.namespace()).isEqualTo("team-a");
    }

    @Test
    void rejectsAContextTheKubeconfigDoesNotHaveListingThoseItHas() throws IOException {
        Path kubeconfig = write("kubeconfig", KUBECONFIG);

        assertThatThrownBy(() -> options(nowhere(), Map.of("service", "compute",
                "kubeconfig", kubeconfig.toString(), "context", "team-c")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "context"))
                .hasMessageContaining("'team-c'")
                .hasMessageContaining("[team-a, team-b, bare]");
    }

    @Test
    void reportsAMissingNamespaceNamingItsKey() throws IOException {
        Path kubeconfig = write("kubeconfig", KUBECONFIG);

        assertThatThrownBy(() -> options(nowhere(), Map.of("service", "compute",
                "kubeconfig", kubeconfig.toString(), "context", "bare")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.key()).isEqualTo(PREFIX + "namespace"))
                .hasMessageContaining("context 'bare'")
                .hasMessageNotContaining(TOKEN);
    }

    @Test
    void usesThePodsServiceAccountAndNamespaceWhenRunningInACluster() throws IOException {
        Path sa = dir.resolve("serviceaccount");
        write("serviceaccount/token", TOKEN + "\n");
        write("serviceaccount/namespace", "compute-prod\n");
        HostEnvironment pod = new HostEnvironment(sa, Map.of("KUBERNETES_SERVICE_HOST", "127.0.0.1",
                "KUBERNETES_SERVICE_PORT", "6443")::get, dir.resolve("home"));

        KubernetesSettings options = options(pod, Map.of("service", "compute"));

        assertThat(options.namespace()).isEqualTo("compute-prod");
        assertThat(options.access().kind()).isEqualTo(ClusterAccess.Kind.IN_CLUSTER);
        Config config = options.access().toConfig(options.namespace(), Duration.ofSeconds(3), Duration.ofSeconds(1));
        assertThat(config.getMasterUrl()).isEqualTo("https://127.0.0.1:6443/");
        assertThat(config.getOauthTokenProvider().getToken()).isEqualTo(TOKEN);
        assertThat(config.getRequestTimeout()).isEqualTo(3000);
        assertThat(options.access().describe()).doesNotContain(TOKEN);
    }

    @Test
    void failsWhenThereIsNoClusterToTalkToNamingTheKeysThatWouldSayWhich() {
        assertThatThrownBy(() -> options(nowhere(), Map.of("service", "compute")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(PREFIX + "kubeconfig")
                .hasMessageContaining(PREFIX + "master");
    }

    @Test
    void createNeverContactsTheApiServer() {
        try (UnresponsiveWorker apiServer = UnresponsiveWorker.start()) {
            Map<String, String> keys = Map.of("service", "compute", "namespace", "ns",
                    "master", "http://127.0.0.1:" + apiServer.endpoint().port());

            try (WorkerDiscovery discovery = new KubernetesWorkerDiscoveryProvider(nowhere()).create(settings(keys))) {
                assertThat(discovery.description()).isEqualTo("k8s[ns/compute, single port, 0 endpoints]");
            }
            Map<String, String> ipv6 = new java.util.HashMap<>(keys);
            ipv6.put("ip-family", "ipv6");
            try (WorkerDiscovery discovery = new KubernetesWorkerDiscoveryProvider(nowhere()).create(settings(ipv6))) {
                assertThat(discovery.description()).as("a non-default ip-family is shown")
                        .isEqualTo("k8s[ns/compute, single port, IPv6, 0 endpoints]");
            }
            assertThat(apiServer.connectionsAccepted()).isZero();
        }
    }

    // ---- helpers

    private static Map<String, String> withMaster(Map<String, String> keys) {
        Map<String, String> all = new HashMap<>(keys);
        all.put("namespace", "ns");
        all.put("master", "http://127.0.0.1:8001");
        return all;
    }

    private static KubernetesSettings options(HostEnvironment host, Map<String, String> keys) {
        return new KubernetesWorkerDiscoveryProvider(host).options(settings(keys));
    }

    private static Settings settings(Map<String, String> keys) {
        Map<String, String> full = new HashMap<>();
        keys.forEach((k, v) -> full.put(PREFIX + k, v));
        return Settings.of(full).scope(PREFIX);
    }

    private Path write(String relative, String content) throws IOException {
        Path file = dir.resolve(relative);
        Files.createDirectories(file.getParent());
        return Files.writeString(file, content);
    }
}
