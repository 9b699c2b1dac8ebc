package dev.rollcall.it.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.policy.VersionPolicyProvider;
import dev.rollcall.server.ServerKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/kubernetes/rollcall.yaml}, read with the project's Kubernetes client (fabric8), is
 * valid objects that fit together (the account the pod runs as is the one the Role is bound to;
 * the pod reads the ConfigMap's file where the command looks for it; probes and the Service use
 * the ports the configuration serves), and its {@code rollcall.properties} names only declared
 * keys, with values their declarations accept and a backend and a policy the distribution has.
 * That the Role grants exactly what the backend asks for is {@code DeployManifestRoleTest}'s check
 * (discovery-k8s), which runs the backend. And {@code deploy/systemd/rollcall.service} runs
 * {@code rollcall serve} with its file.
 */
class DeployManifestTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path MANIFEST = ROOT.resolve("deploy/kubernetes/rollcall.yaml");
    private static final Path UNIT = ROOT.resolve("deploy/systemd/rollcall.service");

    private static List<HasMetadata> objects() throws IOException {
        try (InputStream in = Files.newInputStream(MANIFEST)) {
            Object parsed = new KubernetesSerialization().unmarshal(in);
            List<HasMetadata> objects = new ArrayList<>();
            if (parsed instanceof List<?> many) {
                many.forEach(o -> objects.add((HasMetadata) o));
            } else {
                objects.add((HasMetadata) parsed);
            }
            return objects;
        }
    }

    private static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
        List<T> found = objects.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(found).as("%s in %s", type.getSimpleName(), MANIFEST).hasSize(1);
        return found.get(0);
    }

    private static Container container(Deployment deployment) {
        List<Container> containers = deployment.getSpec().getTemplate().getSpec().getContainers();
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    private static ContainerPort port(Container container, String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container port named " + name + ": " + container.getPorts()));
    }

    /** The ConfigMap's {@code rollcall.properties}, as {@code rollcall serve --config} would read it. */
    private static RollcallConfig configuration(List<HasMetadata> objects) throws IOException {
        String text = one(objects, ConfigMap.class).getData().get("rollcall.properties");
        assertThat(text).as("the ConfigMap's rollcall.properties").isNotBlank();
        Properties properties = new Properties();
        properties.load(new StringReader(text));
        Map<String, String> values = new HashMap<>();
        properties.stringPropertyNames().forEach(k -> values.put(k, properties.getProperty(k)));
        return RollcallConfig.of(values);
    }

    @Test
    void theManifestIsAServiceAccountItsRoleAConfigMapADeploymentAndAServiceInOneNamespace() throws IOException {
        List<HasMetadata> objects = objects();
        // Two Roles: the discovery backend's, and the readiness gate's (kubernetes-gate's DeployManifestGateTest).
        assertThat(objects).extracting(HasMetadata::getKind).containsExactly("ServiceAccount", "Role", "RoleBinding",
                "Role", "RoleBinding", "ConfigMap", "Deployment", "Service");
        assertThat(objects).extracting(o -> o.getMetadata().getNamespace()).as("one namespace, the workers'")
                .containsOnly(one(objects, Deployment.class).getMetadata().getNamespace()).doesNotContainNull();

        ServiceAccount account = one(objects, ServiceAccount.class);
        Deployment deployment = one(objects, Deployment.class);
        assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName())
                .isEqualTo(account.getMetadata().getName());
        List<String> roles = objects.stream().filter(Role.class::isInstance).map(o -> o.getMetadata().getName()).toList();
        List<RoleBinding> bindings = objects.stream().filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
                .toList();
        assertThat(bindings).extracting(b -> b.getRoleRef().getName()).as("each Role bound once")
                .containsExactlyElementsOf(roles);
        for (RoleBinding binding : bindings) {
            assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
            assertThat(binding.getSubjects()).extracting(Subject::getKind, Subject::getName, Subject::getNamespace)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("ServiceAccount", account.getMetadata().getName(),
                            account.getMetadata().getNamespace()));
        }
        assertThat(deployment.getSpec().getSelector().getMatchLabels())
                .isEqualTo(deployment.getSpec().getTemplate().getMetadata().getLabels());
        assertThat(one(objects, Service.class).getSpec().getSelector())
                .isEqualTo(deployment.getSpec().getTemplate().getMetadata().getLabels());
    }

    @Test
    void thePodRunsServeOnTheConfigMapsFile() throws IOException {
        List<HasMetadata> objects = objects();
        Deployment deployment = one(objects, Deployment.class);
        Container container = container(deployment);
        List<String> command = container.getCommand();
        assertThat(command).hasSize(4);
        assertThat(command.get(0)).endsWith("/bin/rollcall");
        assertThat(command.subList(1, 3)).containsExactly("serve", "--config");

        // The file --config names is the ConfigMap's rollcall.properties, mounted where it says.
        Path file = Path.of(command.get(3));
        VolumeMount mount = container.getVolumeMounts().stream()
                .filter(m -> file.getParent().equals(Path.of(m.getMountPath()))).findFirst()
                .orElseThrow(() -> new AssertionError("no volume mounted at " + file.getParent()));
        Volume volume = deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        assertThat(volume.getConfigMap()).as("the volume at %s", mount.getMountPath()).isNotNull();
        assertThat(volume.getConfigMap().getName()).isEqualTo(one(objects, ConfigMap.class).getMetadata().getName());
        assertThat(one(objects, ConfigMap.class).getData()).containsKey(file.getFileName().toString());
    }

    @Test
    void probesAndServiceUseThePortsTheConfigurationServes() throws IOException {
        List<HasMetadata> objects = objects();
        Settings settings = configuration(objects).settings();
        Container container = container(one(objects, Deployment.class));

        assertThat(port(container, "grpc").getContainerPort()).isEqualTo(settings.get(ServerKeys.PORT));
        assertThat(port(container, "http").getContainerPort()).isEqualTo(settings.get(ServerKeys.HTTP_PORT));
        assertThat(settings.get(ServerKeys.PORT)).as("the key's default, written out").isEqualTo(ServerKeys.PORT.defaultValue());
        assertThat(settings.get(ServerKeys.HTTP_PORT)).isEqualTo(ServerKeys.HTTP_PORT.defaultValue());
        assertThat(settings.get(ServerKeys.HOST)).as("reachable by kubelet and the Service").isEqualTo("0.0.0.0");

        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(container.getReadinessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString("http"));
        assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(container.getLivenessProbe().getHttpGet().getPort()).isEqualTo(new IntOrString("http"));

        Map<String, ServicePort> servicePorts = one(objects, Service.class).getSpec().getPorts().stream()
                .collect(Collectors.toMap(ServicePort::getName, p -> p));
        assertThat(servicePorts).containsOnlyKeys("grpc", "http");
        assertThat(servicePorts.get("grpc").getTargetPort()).isEqualTo(new IntOrString("grpc"));
        assertThat(servicePorts.get("http").getTargetPort()).isEqualTo(new IntOrString("http"));
        assertThat(servicePorts.get("grpc").getPort()).isEqualTo(settings.get(ServerKeys.PORT));
    }

    @Test
    void everyKeyOfTheConfigMapIsDeclaredWithAValueItAcceptsAndNamesABackendAndPolicyOnTheClassPath()
            throws IOException {
        RollcallConfig config = configuration(objects());
        Map<String, SettingKey<?>> declared = KeyCatalog.all(getClass().getClassLoader()).stream()
                .collect(Collectors.toMap(SettingKey::name, k -> k, (a, b) -> a));
        for (Map.Entry<String, String> e : config.values().entrySet()) {
            SettingKey<?> key = declared.get(e.getKey());
            assertThat(key).as("%s is declared in a KeyCatalog", e.getKey()).isNotNull();
            key.parse(e.getValue());    // throws ConfigurationException naming key and value
        }
        Set<String> backends = ServiceLoader.load(WorkerDiscoveryProvider.class).stream()
                .map(p -> p.get().type()).collect(Collectors.toSet());
        assertThat(backends).as("backends on the class path").contains(config.values().get("rollcall.discovery.type"));
        Set<String> policies = ServiceLoader.load(VersionPolicyProvider.class).stream()
                .map(p -> p.get().type()).collect(Collectors.toSet());
        assertThat(policies).contains(config.values().get("rollcall.policy.type"));
    }

    @Test
    void theContainerRunsAsNonRootWithNoPrivilegesOnAReadOnlyRootAndAWritableTmp() throws IOException {
        Deployment deployment = one(objects(), Deployment.class);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        Container container = container(deployment);
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        VolumeMount tmp = container.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/tmp"))
                .findFirst().orElseThrow(() -> new AssertionError("the JVM needs a writable /tmp"));
        assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals(tmp.getName()))
                .singleElement().satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
        assertThat(container.getResources().getLimits()).containsKey("memory");
        assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
    }

    @Test
    void theSystemdUnitRunsServeWithItsConfigFileAsAnUnprivilegedRestartedService() throws IOException {
        Map<String, List<String>> unit = new HashMap<>();
        for (String line : Files.readAllLines(UNIT, StandardCharsets.UTF_8)) {
            String l = line.strip();
            int eq = l.indexOf('=');
            if (!l.isEmpty() && !l.startsWith("#") && !l.startsWith("[") && eq > 0) {
                unit.computeIfAbsent(l.substring(0, eq), k -> new ArrayList<>()).add(l.substring(eq + 1));
            }
        }
        assertThat(unit.get("ExecStart")).singleElement().satisfies(exec -> assertThat(exec)
                .matches("/opt/rollcall/bin/rollcall serve --config /etc/rollcall/rollcall\\.properties"));
        assertThat(unit.get("DynamicUser")).containsExactly("yes");
        assertThat(unit.get("Restart")).containsExactly("on-failure");
        assertThat(unit.get("NoNewPrivileges")).containsExactly("yes");
        assertThat(unit.get("ProtectSystem")).containsExactly("strict");
        assertThat(unit.get("PrivateTmp")).containsExactly("yes");
        assertThat(unit.get("KillSignal")).containsExactly("SIGTERM");
        assertThat(unit.get("SuccessExitStatus")).as("the JVM's exit after SIGTERM is a clean stop").contains("143");
        assertThat(unit).as("the JIT writes the code it runs").doesNotContainKey("MemoryDenyWriteExecute");
    }
}
