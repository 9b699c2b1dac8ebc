package dev.rollcall.discovery.k8s;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the backend looks at to find its cluster when the configuration does not say: the pod's
 * service account mount, the {@code KUBERNETES_SERVICE_*} and {@code KUBECONFIG} environment
 * variables and the home directory. Injectable so that tests can pretend to run in a pod.
 *
 * @param serviceAccountDir where Kubernetes mounts the service account (token, ca.crt, namespace)
 * @param env               environment variables by name ({@code null} when unset)
 * @param userHome          the user's home directory, for {@code ~/.kube/config}
 */
record HostEnvironment(Path serviceAccountDir, Function<String, String> env, Path userHome) {

    static final Path SERVICE_ACCOUNT_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    static HostEnvironment system() {
        return new HostEnvironment(SERVICE_ACCOUNT_DIR, System::getenv, Path.of(System.getProperty("user.home", ".")));
    }

    /**
     * The API server URL when running in a pod: {@code KUBERNETES_SERVICE_HOST} and
     * {@code KUBERNETES_SERVICE_PORT} are set and the service account token is mounted.
     */
    Optional<String> inClusterUrl() {
        String host = env.apply("KUBERNETES_SERVICE_HOST");
        String port = env.apply("KUBERNETES_SERVICE_PORT");
        if (host == null || host.isBlank() || port == null || port.isBlank()
                || !Files.isRegularFile(serviceAccountDir.resolve("token"))) {
            return Optional.empty();
        }
        String h = host.strip();
        return Optional.of("https://" + (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + port.strip());
    }

    /** The pod's namespace file (it exists only in a pod). */
    Path namespaceFile() {
        return serviceAccountDir.resolve("namespace");
    }

    /**
     * Where kubectl looks for a kubeconfig: each entry of {@code KUBECONFIG}, else
     * {@code ~/.kube/config}.
     */
    List<Path> kubeconfigCandidates() {
        List<Path> paths = new ArrayList<>();
        String list = env.apply("KUBECONFIG");
        if (list != null && !list.isBlank()) {
            for (String item : list.split(File.pathSeparator)) {
                if (!item.isBlank()) {
                    try {
                        paths.add(Path.of(item.strip()));
                    } catch (InvalidPathException e) {
                        // not a path this platform can have: it cannot exist either
                    }
                }
            }
            return paths;
        }
        paths.add(userHome.resolve(".kube").resolve("config"));
        return paths;
    }

    /** The first kubeconfig candidate that is a file. */
    Optional<Path> defaultKubeconfig() {
        return kubeconfigCandidates().stream().filter(Files::isRegularFile).findFirst();
    }
}
