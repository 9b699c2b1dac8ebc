package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.discovery.staticlist.StaticWorkerDiscoveryProvider;
import dev.rollcall.policy.SemverRangePolicyProvider;
import dev.rollcall.testkit.plugin.PinnedPolicyPlugin;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JPMS users: {@code rollcall-api} is a named module ({@code dev.rollcall.api}), the other jars are
 * automatic modules named by their {@code Automatic-Module-Name}, and a custom policy compiled as a
 * named module is found through its {@code provides} clause alone (it has no
 * {@code META-INF/services} file).
 */
class ModulePathTest {

    @Test
    void aPolicyInANamedModuleIsFoundThroughProvidesAndEveryJarHasItsModuleName(@TempDir Path dir) throws Exception {
        Path api = location(WorkerInfo.class);
        Path protobuf = location(com.google.protobuf.Message.class);
        Path semver = location(org.semver4j.Semver.class); // api requires org.semver4j (a requirement's npm range)
        Path policy = PinnedPolicyPlugin.namedModule(dir, List.of(api, protobuf, semver));

        // Named: api, protobuf (read by api's "requires static"), the policy; semver4j is automatic
        // (org.semver4j, which api requires). Automatic, when they are
        // jars (they are in a full build; a reactor run up to "test" has class directories instead):
        // core, the protocol, the static backend and the stock policies. Core reaches api's internal
        // package through api's qualified export to dev.rollcall.core.
        Map<String, Path> automatic = new LinkedHashMap<>();
        automatic.put("core", location(WorkerResolver.class));
        automatic.put("protocol", location(dev.rollcall.protocol.v1.WorkerInfoResponse.class));
        automatic.put("static", location(StaticWorkerDiscoveryProvider.class));
        automatic.put("version-policy", location(SemverRangePolicyProvider.class));
        automatic.values().removeIf(p -> !p.toString().endsWith(".jar"));
        List<Path> modulePath = new ArrayList<>(List.of(api, protobuf, semver, policy));
        modulePath.addAll(automatic.values());
        String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(Path::of)
                .filter(p -> !modulePath.contains(p.toAbsolutePath()))
                .map(Path::toString)
                .collect(Collectors.joining(File.pathSeparator));

        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modulePath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
                "--add-modules", "ALL-MODULE-PATH",
                "-cp", classPath, ModulePathPolicyProcess.class.getName())
                .redirectErrorStream(true)
                .start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(child.exitValue()).as(out).isZero();
        assertThat(out).contains("api module: dev.rollcall.api")
                .contains("policy: pinned 2.0.0 from module com.example.pinned");
        Map<String, String> names = Map.of("core", "dev.rollcall.core", "protocol", "dev.rollcall.protocol", "static", "dev.rollcall.discovery.staticlist",
                "version-policy", "dev.rollcall.policy");
        automatic.keySet().forEach(m -> assertThat(out).as(out).contains(m + " module: " + names.get(m)));
    }

    private static Path location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath();
    }
}
