package dev.rollcall.discovery.k8s;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.client.internal.KubeConfigUtils;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Creates the {@code k8s} discovery backend ({@code rollcall.discovery.type=k8s}): the candidates
 * are the serving endpoints of a Kubernetes service, one per pod, read from its EndpointSlices
 * (see {@code SliceCandidates} for the rules and the labels). Keys, under
 * {@code rollcall.discovery.k8s.}:
 *
 * <ul>
 *   <li>{@code service} (required): the service's name;
 *   <li>{@code namespace}: its namespace; by default the kubeconfig context's namespace, or the
 *       pod's own namespace when running in a cluster;
 *   <li>{@code port}: the name or number of the workers' gRPC port in the slices; required when
 *       the slices list several ports;
 *   <li>{@code scheme}: {@code grpc} or {@code grpcs} (TLS);
 *   <li>{@code kubeconfig}, {@code context}: a kubeconfig file and context to use instead of the
 *       pod's service account;
 *   <li>{@code master}: an API server URL used without credentials (tests, {@code kubectl proxy}),
 *       or, with a kubeconfig, instead of its server;
 *   <li>{@code request-timeout} and {@code resync} ({@code 0} turns it off);
 *   <li>{@code ip-family}: which address of a dual-stack pod is its candidate: {@code IPv4},
 *       {@code IPv6}, {@code PreferIPv4} or {@code PreferIPv6} ({@link IpFamily});
 *   <li>{@code keepalive-time}: while it watches, how
 *       often the backend asks the API server for a sign of life ({@code GET /version}); a silent
 *       API server is reported within this plus {@code request-timeout}.
 *   <li>{@code version-label} ({@code none} turns it off): the pod label whose value is the version the pod claims, read through each
 *       endpoint's {@code targetRef} from an informer on the namespace's pods (which needs
 *       {@code list} and {@code watch} on pods);
 *   <li>{@code pod-selector}: {@code key=value} pairs, comma-separated, that narrow the pods that
 *       informer lists and watches (the service's selector, typically); by default all of the
 *       namespace's.
 * </ul>
 * Defaults and bounds: {@link KubernetesKeys}.
 *
 * <p>Without {@code kubeconfig}, {@code context} and {@code master} the backend uses the pod's
 * service account when it runs in a pod, else the kubeconfig kubectl would use.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} checks
 * every key and throws {@link ConfigurationException} naming the full key for any bad one. It never
 * contacts the API server; when the namespace is not configured it reads the pod's namespace file or
 * parses the kubeconfig (without running credential plugins) so that a missing namespace fails at
 * start-up, not later. There is no registration provider: Kubernetes registers pods itself.
 */
public final class KubernetesWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    static final String TYPE = "k8s";
    static final String SERVICE = KubernetesKeys.relative(KubernetesKeys.SERVICE);
    static final String NAMESPACE = KubernetesKeys.relative(KubernetesKeys.NAMESPACE);
    static final String PORT = KubernetesKeys.relative(KubernetesKeys.PORT);
    static final String SCHEME = KubernetesKeys.relative(KubernetesKeys.SCHEME);
    static final String KUBECONFIG = KubernetesKeys.relative(KubernetesKeys.KUBECONFIG);
    static final String CONTEXT = KubernetesKeys.relative(KubernetesKeys.CONTEXT);
    static final String MASTER = KubernetesKeys.relative(KubernetesKeys.MASTER);
    static final String REQUEST_TIMEOUT = KubernetesKeys.relative(KubernetesKeys.REQUEST_TIMEOUT);
    static final String RESYNC = KubernetesKeys.relative(KubernetesKeys.RESYNC);
    static final String IP_FAMILY = KubernetesKeys.relative(KubernetesKeys.IP_FAMILY);
    static final String KEEPALIVE_TIME = KubernetesKeys.relative(KubernetesKeys.KEEPALIVE_TIME);
    static final String VERSION_LABEL = KubernetesKeys.relative(KubernetesKeys.VERSION_LABEL);
    static final String POD_SELECTOR = KubernetesKeys.relative(KubernetesKeys.POD_SELECTOR);
    /** The value of {@code version-label} that turns pod watching off (a blank value means unset). */
    static final String VERSION_LABEL_OFF = "none";

    /** fabric8 raises shorter resync periods to one second anyway. */
    static final Duration MIN_RESYNC = Duration.ofSeconds(1);

    /** A Service name (RFC 1035 label). */
    private static final Pattern DNS_1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
    /** A namespace or port name (RFC 1123 label). */
    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    /** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters. */
    private static final Pattern LABEL_KEY = Pattern.compile(
            "(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    /** A label value: empty, or at most 63 characters like a name. */
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");
    private static final String LABEL_KEY_RULE = "a Kubernetes label key ([prefix/]name: a DNS subdomain of at most 253"
            + " characters, then a name of at most 63 letters, digits, '-', '_' and '.')";

    private final HostEnvironment host;

    /** Needed by {@link java.util.ServiceLoader}. */
    public KubernetesWorkerDiscoveryProvider() {
        this(HostEnvironment.system());
    }

    KubernetesWorkerDiscoveryProvider(HostEnvironment host) {
        this.host = Objects.requireNonNull(host, "host");
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        return new KubernetesWorkerDiscovery(options(settings));
    }

    /** Reads and checks every key; package-private so tests can adjust the timings. */
    KubernetesSettings options(Settings settings) {
        Optional<String> serviceText = settings.find(KubernetesKeys.SERVICE);
        Optional<String> namespaceText = settings.find(KubernetesKeys.NAMESPACE);
        Optional<String> portText = settings.find(KubernetesKeys.PORT);
        String schemeText = settings.get(KubernetesKeys.SCHEME);
        Optional<String> kubeconfigText = settings.find(KubernetesKeys.KUBECONFIG);
        Optional<String> contextText = settings.find(KubernetesKeys.CONTEXT);
        Optional<String> masterText = settings.find(KubernetesKeys.MASTER);
        String ipFamilyText = settings.get(KubernetesKeys.IP_FAMILY);
        String versionLabelText = settings.get(KubernetesKeys.VERSION_LABEL);
        Optional<String> podSelectorText = settings.find(KubernetesKeys.POD_SELECTOR);

        String service = serviceText.orElseThrow(() -> ConfigurationException.missing(settings.fullKey(SERVICE),
                "the name of the Kubernetes service whose endpoints are the workers"));
        requireLabel(settings, SERVICE, service, DNS_1035_LABEL,
                "a Kubernetes service name (lower-case letters, digits and '-', starting with a letter, at most 63 characters)");
        namespaceText.ifPresent(ns -> requireLabel(settings, NAMESPACE, ns, DNS_1123_LABEL,
                "a Kubernetes namespace (lower-case letters, digits and '-', at most 63 characters)"));
        PortSelector port = port(settings, portText);
        boolean tls = tls(settings, schemeText);
        Duration requestTimeout = settings.get(KubernetesKeys.REQUEST_TIMEOUT);
        Duration resync = settings.get(KubernetesKeys.RESYNC);
        if (!resync.isZero() && resync.compareTo(MIN_RESYNC) < 0) {
            throw ConfigurationException.invalid(settings.fullKey(RESYNC), settings.raw(RESYNC).orElse(""),
                    "0 (no resync) or a duration of at least 1s");
        }
        Duration keepalive = settings.get(KubernetesKeys.KEEPALIVE_TIME);
        IpFamily ipFamily = IpFamily.parse(ipFamilyText).orElseThrow(() ->
                ConfigurationException.invalid(settings.fullKey(IP_FAMILY), ipFamilyText, IpFamily.choices()));
        String master = masterText.map(m -> master(settings, m)).orElse(null);
        ClusterAccess access = access(settings, kubeconfigText, contextText, master);
        String namespace = namespaceText.orElseGet(() -> defaultNamespace(settings, access));
        String versionLabel = versionLabel(settings, versionLabelText);
        Map<String, String> podSelector = podSelectorText.map(text -> podSelector(settings, text)).orElse(Map.of());
        if (versionLabel == null && !podSelector.isEmpty()) {
            throw new ConfigurationException(settings.fullKey(POD_SELECTOR), settings.fullKey(POD_SELECTOR)
                    + " is set but " + settings.fullKey(VERSION_LABEL) + "=" + VERSION_LABEL_OFF
                    + " watches no pods; remove one of them");
        }
        return new KubernetesSettings(service, namespace, port, tls, access, requestTimeout, resync,
                KubernetesSettings.Timings.DEFAULT, ipFamily, keepalive, versionLabel, podSelector);
    }

    /** The label key, or null for {@value #VERSION_LABEL_OFF}. */
    private static String versionLabel(Settings settings, String text) {
        if (text.equals(VERSION_LABEL_OFF)) {
            return null;
        }
        if (!isLabelKey(text)) {
            throw ConfigurationException.invalid(settings.fullKey(VERSION_LABEL), text, LABEL_KEY_RULE + ", or "
                    + VERSION_LABEL_OFF + " to watch no pods");
        }
        return text;
    }

    private static Map<String, String> podSelector(Settings settings, String text) {
        String expected = "key=value pairs, comma-separated (an equality label selector such as"
                + " app.kubernetes.io/name=workers,tier=compute)";
        Map<String, String> selector = new LinkedHashMap<>();
        for (String part : text.split(",", -1)) {
            int eq = part.indexOf('=');
            String key = eq < 0 ? part.strip() : part.substring(0, eq).strip();
            String value = eq < 0 ? "" : part.substring(eq + 1).strip();
            if (eq < 0 || !isLabelKey(key) || value.length() > 63 || !LABEL_VALUE.matcher(value).matches()
                    || selector.put(key, value) != null) {
                throw ConfigurationException.invalid(settings.fullKey(POD_SELECTOR), text, expected);
            }
        }
        return selector;
    }

    private static boolean isLabelKey(String key) {
        int slash = key.indexOf('/');
        String prefix = slash < 0 ? "" : key.substring(0, slash);
        String name = key.substring(slash + 1);
        return prefix.length() <= 253 && name.length() <= 63 && LABEL_KEY.matcher(key).matches();
    }

    private static void requireLabel(Settings settings, String key, String value, Pattern pattern, String expected) {
        if (value.length() > 63 || !pattern.matcher(value).matches()) {
            throw ConfigurationException.invalid(settings.fullKey(key), value, expected);
        }
    }

    private static PortSelector port(Settings settings, Optional<String> text) {
        String key = settings.fullKey(PORT);
        if (text.isEmpty()) {
            return PortSelector.onlyPort(key);
        }
        String value = text.get();
        if (value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            int number = settings.integer(PORT, 0, 1, 65535);
            return PortSelector.byNumber(number, key);
        }
        requireLabel(settings, PORT, value, DNS_1123_LABEL,
                "a port number from 1 to 65535 or a port name (lower-case letters, digits and '-')");
        return PortSelector.byName(value, key);
    }

    private static boolean tls(Settings settings, String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "grpc" -> false;
            case "grpcs" -> true;
            default -> throw ConfigurationException.invalid(settings.fullKey(SCHEME), text,
                    "grpc (plaintext) or grpcs (TLS)");
        };
    }

    private static String master(Settings settings, String text) {
        String expected = "the API server's URL, such as https://203.0.113.10:6443 or http://127.0.0.1:8001";
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw ConfigurationException.invalid(settings.fullKey(MASTER), text, expected);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
                || uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw ConfigurationException.invalid(settings.fullKey(MASTER), text, expected);
        }
        return text;
    }

    private ClusterAccess access(Settings settings, Optional<String> kubeconfigText, Optional<String> context,
                                 String master) {
        if (kubeconfigText.isPresent()) {
            String key = settings.fullKey(KUBECONFIG);
            Path file;
            try {
                file = Path.of(kubeconfigText.get()).toAbsolutePath();
            } catch (InvalidPathException e) {
                throw ConfigurationException.invalid(key, kubeconfigText.get(), "a kubeconfig file (" + e.getReason() + ")");
            }
            if (!Files.isRegularFile(file)) {
                throw ConfigurationException.invalid(key, kubeconfigText.get(), "a kubeconfig file, but " + file
                        + (Files.isDirectory(file) ? " is a directory" : " does not exist"));
            }
            return ClusterAccess.kubeconfig(file, context.orElse(null), master);
        }
        if (context.isPresent()) {
            Path file = host.defaultKubeconfig().orElseThrow(() -> new ConfigurationException(settings.fullKey(CONTEXT),
                    settings.fullKey(CONTEXT) + "=" + ConfigurationException.printable(settings.fullKey(CONTEXT), context.get())
                            + " needs a kubeconfig, but there is none at " + candidates() + "; set "
                            + settings.fullKey(KUBECONFIG)));
            return ClusterAccess.kubeconfig(file, context.get(), master);
        }
        if (master != null) {
            return ClusterAccess.master(master);
        }
        Optional<String> inCluster = host.inClusterUrl();
        if (inCluster.isPresent()) {
            return ClusterAccess.inCluster(inCluster.get(), host.serviceAccountDir());
        }
        return host.defaultKubeconfig().map(file -> ClusterAccess.kubeconfig(file, null, null))
                .orElseThrow(() -> new ConfigurationException(settings.fullKey(KUBECONFIG),
                        "k8s discovery cannot tell which Kubernetes API server to use: this is not a pod (no "
                                + "KUBERNETES_SERVICE_HOST, or no service account token in " + host.serviceAccountDir()
                                + ") and there is no kubeconfig at " + candidates() + "; set "
                                + settings.fullKey(KUBECONFIG) + " (and maybe " + settings.fullKey(CONTEXT) + ") or "
                                + settings.fullKey(MASTER)));
    }

    private String candidates() {
        List<String> paths = new ArrayList<>();
        host.kubeconfigCandidates().forEach(p -> paths.add(p.toString()));
        return String.join(", ", paths);
    }

    /** The kubeconfig context's namespace, or the pod's; checks the context while at it. */
    private String defaultNamespace(Settings settings, ClusterAccess access) {
        String nsKey = settings.fullKey(NAMESPACE);
        if (access.kind() == ClusterAccess.Kind.KUBECONFIG) {
            NamedContext context = kubeconfigContext(settings, access);
            String ns = context.getContext() == null ? null : context.getContext().getNamespace();
            if (ns != null && !ns.isBlank()) {
                requireLabel(settings, NAMESPACE, ns.strip(), DNS_1123_LABEL,
                        "a Kubernetes namespace (this one comes from context '" + context.getName() + "' of "
                                + access.kubeconfig() + ")");
                return ns.strip();
            }
            throw ConfigurationException.missing(nsKey, "a namespace: context '" + context.getName() + "' of "
                    + access.kubeconfig() + " does not set one");
        }
        Path file = host.namespaceFile();
        if (Files.isRegularFile(file)) {
            String ns;
            try {
                ns = Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new ConfigurationException(nsKey, nsKey + " is not set and the pod's namespace file " + file
                        + " cannot be read: " + e.getMessage(), e);
            }
            requireLabel(settings, NAMESPACE, ns, DNS_1123_LABEL, "a Kubernetes namespace (this one comes from " + file + ")");
            return ns;
        }
        throw ConfigurationException.missing(nsKey, "a namespace: this is not a pod (no " + file + ") and "
                + (access.kind() == ClusterAccess.Kind.MASTER ? settings.fullKey(MASTER) + " comes with none"
                : "the service account names none"));
    }

    private static NamedContext kubeconfigContext(Settings settings, ClusterAccess access) {
        io.fabric8.kubernetes.api.model.Config kubeconfig;
        try {
            kubeconfig = KubeConfigUtils.parseConfig(access.kubeconfig().toFile());
        } catch (RuntimeException e) {
            // The message of a YAML error quotes the offending text, which may be a credential.
            throw new ConfigurationException(settings.fullKey(KUBECONFIG), "cannot parse the kubeconfig "
                    + access.kubeconfig() + " (" + settings.fullKey(KUBECONFIG) + "): it is not valid kubeconfig YAML");
        }
        List<NamedContext> contexts = kubeconfig.getContexts() == null ? List.of() : kubeconfig.getContexts();
        List<String> names = contexts.stream().map(NamedContext::getName).filter(Objects::nonNull).toList();
        String wanted = access.context() != null ? access.context() : kubeconfig.getCurrentContext();
        String contextKey = settings.fullKey(CONTEXT);
        if (wanted == null || wanted.isBlank()) {
            throw ConfigurationException.missing(contextKey, "a context: " + access.kubeconfig()
                    + " has no current-context; its contexts are " + names);
        }
        return contexts.stream().filter(c -> wanted.equals(c.getName())).findFirst()
                .orElseThrow(() -> new ConfigurationException(contextKey, (access.context() != null
                        ? contextKey + "=" + ConfigurationException.printable(contextKey, wanted)
                        : "the current-context '" + wanted + "'")
                        + " is not a context of " + access.kubeconfig() + "; its contexts are " + names));
    }
}
