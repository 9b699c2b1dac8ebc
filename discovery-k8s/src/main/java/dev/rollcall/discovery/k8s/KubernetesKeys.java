package dev.rollcall.discovery.k8s;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * The Kubernetes backend's keys, each declared once; {@link KubernetesWorkerDiscoveryProvider}
 * reads through them. There are no {@code registration.*} keys: Kubernetes registers pods itself.
 * Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class KubernetesKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-discovery-k8s";
    private static final String SCOPE = "rollcall.discovery.k8s.";

    static final SettingKey<String> SERVICE = SettingKey.define(MODULE, SCOPE + "service", SettingType.TEXT,
            "the service whose endpoints are the workers").required();
    static final SettingKey<String> NAMESPACE = SettingKey.define(MODULE, SCOPE + "namespace", SettingType.TEXT,
            "the service's namespace").derivedDefault("see below");
    static final SettingKey<String> PORT = SettingKey.define(MODULE, SCOPE + "port", SettingType.TEXT,
            "the workers' gRPC port in the slices, by name or number").derivedDefault("the slices' only TCP port");
    /** Case-insensitive, so checked where it is read rather than by a list of allowed values. */
    static final SettingKey<String> SCHEME = SettingKey.define(MODULE, SCOPE + "scheme", SettingType.TEXT,
            "grpc (plaintext) or grpcs (TLS) for every worker URL").byDefault("grpc");
    static final SettingKey<String> KUBECONFIG = SettingKey.define(MODULE, SCOPE + "kubeconfig", SettingType.TEXT,
            "a kubeconfig file to use instead of the pod's service account");
    static final SettingKey<String> CONTEXT = SettingKey.define(MODULE, SCOPE + "context", SettingType.TEXT,
            "the kubeconfig context").derivedDefault("the kubeconfig's `current-context`");
    static final SettingKey<String> MASTER = SettingKey.define(MODULE, SCOPE + "master", SettingType.TEXT,
            "an API server URL; alone, used without credentials");
    static final SettingKey<Duration> REQUEST_TIMEOUT = SettingKey.define(MODULE, SCOPE + "request-timeout",
            SettingType.DURATION, "connect and request timeout of each API call")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);
    /** A watch says nothing while nothing changes: silence alone tells nothing, an unanswered request does. */
    static final SettingKey<Duration> KEEPALIVE_TIME = SettingKey.define(MODULE, SCOPE + "keepalive-time",
            SettingType.DURATION, "how often a watching discovery asks the API server for a sign of life")
            .byDefault(Duration.ofSeconds(5)).atLeast(Duration.ofMillis(100));
    /** 0 or at least 1s (fabric8 raises shorter periods anyway): checked where it is read, as no bound says "or 0". */
    static final SettingKey<Duration> RESYNC = SettingKey.define(MODULE, SCOPE + "resync", SettingType.DURATION,
            "how often the informer re-delivers its cache; 0 turns it off").byDefault(Duration.ofMinutes(5));
    static final SettingKey<String> VERSION_LABEL = SettingKey.define(MODULE, SCOPE + "version-label",
            SettingType.TEXT, "the pod label that holds the version a pod claims; none watches no pods")
            .byDefault("app.kubernetes.io/version");
    static final SettingKey<String> POD_SELECTOR = SettingKey.define(MODULE, SCOPE + "pod-selector",
            SettingType.TEXT, "key=value pairs: the pods watched for their version label")
            .derivedDefault("all pods of the namespace");
    /** Case-insensitive, so checked where it is read rather than by a list of allowed values. */
    static final SettingKey<String> IP_FAMILY = SettingKey.define(MODULE, SCOPE + "ip-family", SettingType.TEXT,
            "which address of a dual-stack pod becomes its candidate").byDefault("PreferIPv4");

    private static final List<SettingKey<?>> KEYS = List.of(SERVICE, NAMESPACE, PORT, SCHEME, KUBECONFIG, CONTEXT,
            MASTER, REQUEST_TIMEOUT, KEEPALIVE_TIME, RESYNC, VERSION_LABEL, POD_SELECTOR, IP_FAMILY);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }

    /** {@code key}'s name under {@code rollcall.discovery.k8s.}, as the provider's scoped view reads it. */
    static String relative(SettingKey<?> key) {
        return key.name().substring(SCOPE.length());
    }
}
