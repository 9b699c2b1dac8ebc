package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.OAuthTokenProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How the backend reaches the API server, decided in {@code create()} from the configuration and
 * the environment; {@link #toConfig} builds the client configuration later, on the backend's own
 * thread (a kubeconfig may name a credential plugin, which runs then).
 *
 * @param kind              which source of access
 * @param kubeconfig        the kubeconfig file ({@link Kind#KUBECONFIG} only)
 * @param context           the kubeconfig context, or {@code null} for its current context
 * @param master            the API server URL: the whole access for {@link Kind#MASTER}, an override of the
 *                          kubeconfig's server for {@link Kind#KUBECONFIG}; otherwise {@code null}
 * @param serviceAccountDir where the pod's service account is mounted ({@link Kind#IN_CLUSTER} only)
 */
record ClusterAccess(Kind kind, Path kubeconfig, String context, String master, Path serviceAccountDir) {

    enum Kind {
        /** A kubeconfig file and one of its contexts: cluster, credentials, maybe a namespace. */
        KUBECONFIG,
        /** The pod's service account: {@code KUBERNETES_SERVICE_HOST/PORT}, its token and CA. */
        IN_CLUSTER,
        /** A bare URL without credentials: tests, {@code kubectl proxy}. */
        MASTER
    }

    /** Bound service-account tokens are rotated by the kubelet: re-read the file about this often. */
    private static final Duration TOKEN_REREAD = Duration.ofMinutes(1);

    static ClusterAccess kubeconfig(Path file, String context, String master) {
        return new ClusterAccess(Kind.KUBECONFIG, file, context, master, null);
    }

    static ClusterAccess inCluster(String masterUrl, Path serviceAccountDir) {
        return new ClusterAccess(Kind.IN_CLUSTER, null, null, masterUrl, serviceAccountDir);
    }

    static ClusterAccess master(String url) {
        return new ClusterAccess(Kind.MASTER, null, null, url, null);
    }

    /**
     * The fabric8 client configuration. Reads local files (and may run a kubeconfig's credential
     * plugin); never contacts the API server.
     */
    Config toConfig(String namespace, Duration requestTimeout, Duration reconnectInterval) {
        Config config = switch (kind) {
            case KUBECONFIG -> Config.fromKubeconfig(context, kubeconfig.toFile());
            case IN_CLUSTER -> {
                ConfigBuilder b = new ConfigBuilder(Config.empty())
                        .withMasterUrl(master)
                        .withOauthTokenProvider(new ServiceAccountToken(serviceAccountDir.resolve("token")));
                Path ca = serviceAccountDir.resolve("ca.crt");
                if (Files.isRegularFile(ca)) {
                    b.withCaCertFile(ca.toString());
                }
                yield b.build();
            }
            case MASTER -> new ConfigBuilder(Config.empty()).withMasterUrl(master).build();
        };
        if (kind == Kind.KUBECONFIG && master != null) {
            config.setMasterUrl(master.endsWith("/") ? master : master + "/");
        }
        config.setNamespace(namespace);
        int timeoutMs = (int) Math.min(Integer.MAX_VALUE, requestTimeout.toMillis());
        config.setRequestTimeout(timeoutMs);
        config.setConnectionTimeout(timeoutMs);
        // The informer re-lists and re-watches with its own backoff; the HTTP layer's retries would
        // only hide an unreachable API server from us for minutes.
        config.setRequestRetryBackoffLimit(0);
        config.setWatchReconnectInterval((int) Math.min(Integer.MAX_VALUE, reconnectInterval.toMillis()));
        config.setWatchReconnectLimit(-1);
        return config;
    }

    /** For logs and {@code description()}; never contains credentials. */
    String describe() {
        return switch (kind) {
            case KUBECONFIG -> "kubeconfig " + kubeconfig + (context == null ? "" : " context " + context)
                    + (master == null ? "" : " server " + master);
            case IN_CLUSTER -> "in-cluster service account, " + master;
            case MASTER -> master;
        };
    }

    /** The service account token file, re-read every minute; its content never leaves this class. */
    private static final class ServiceAccountToken implements OAuthTokenProvider {
        private final Path file;
        private String token;
        private long readAtNanos;

        ServiceAccountToken(Path file) {
            this.file = file;
        }

        @Override
        public synchronized String getToken() {
            long now = System.nanoTime();
            if (token == null || now - readAtNanos > TOKEN_REREAD.toNanos()) {
                try {
                    token = Files.readString(file, StandardCharsets.UTF_8).strip();
                    readAtNanos = now;
                } catch (IOException e) {
                    if (token == null) {
                        throw new UncheckedIOException("cannot read the service account token " + file, e);
                    }
                    // Keep the last token: a rotation in progress is not a reason to fail requests.
                }
            }
            return token;
        }

        @Override
        public String toString() {
            return "ServiceAccountToken[" + file + "]";
        }
    }
}
