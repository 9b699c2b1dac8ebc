package dev.rollcall.discovery.etcd;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.LoopbackHost;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The connection settings shared by discovery and registration, read and checked from
 * {@code rollcall.discovery.etcd.*}. Immutable and thread-safe; {@link #toString()} never shows the
 * password.
 */
final class EtcdSettings {

    // Names relative to rollcall.discovery.etcd.; the keys themselves (default, bounds) are EtcdKeys'.
    static final String ENDPOINTS = EtcdKeys.relative(EtcdKeys.ENDPOINTS);
    static final String PREFIX = EtcdKeys.relative(EtcdKeys.PREFIX);
    static final String CONNECT_TIMEOUT = EtcdKeys.relative(EtcdKeys.CONNECT_TIMEOUT);
    static final String REQUEST_TIMEOUT = EtcdKeys.relative(EtcdKeys.REQUEST_TIMEOUT);
    static final String BACKOFF_INITIAL = EtcdKeys.relative(EtcdKeys.BACKOFF_INITIAL);
    static final String BACKOFF_MAX = EtcdKeys.relative(EtcdKeys.BACKOFF_MAX);
    static final String KEEPALIVE_TIME = EtcdKeys.relative(EtcdKeys.KEEPALIVE_TIME);
    static final String PAGE_SIZE = EtcdKeys.relative(EtcdKeys.PAGE_SIZE);
    static final String TLS_CA = EtcdKeys.relative(EtcdKeys.TLS_CA);
    static final String TLS_CERT = EtcdKeys.relative(EtcdKeys.TLS_CERT);
    static final String TLS_KEY = EtcdKeys.relative(EtcdKeys.TLS_KEY);
    static final String USER = EtcdKeys.relative(EtcdKeys.USER);
    static final String PASSWORD = EtcdKeys.relative(EtcdKeys.PASSWORD);
    static final String ALLOW_PLAINTEXT_CREDENTIALS = EtcdKeys.relative(EtcdKeys.ALLOW_PLAINTEXT_CREDENTIALS);

    static final int DEFAULT_PORT = 2379;

    /**
     * gRPC's HTTP/2 keepalive, the second layer under discovery's own sign-of-life requests (and
     * the only one for registration's streams). grpc-java raises anything shorter to 10 s.
     */
    static final Duration MIN_HTTP2_KEEPALIVE_TIME = Duration.ofSeconds(10);

    /** The largest answer taken: a page of the prefix is asked again in halves when larger (etcd's own limit is 1.5 MiB per value). */
    static final int MAX_INBOUND_BYTES = 64 << 20;


    private final List<URI> endpoints;
    private final boolean tls;
    private final String prefix;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Duration backoffInitial;
    private final Duration backoffMax;
    private final Duration keepaliveTime;
    private final int pageSize;
    private final int maxInboundBytes;
    private final SslContext sslContext;
    private final String user;
    private final String password;

    private EtcdSettings(List<URI> endpoints, boolean tls, String prefix, Duration connectTimeout,
                         Duration requestTimeout, Duration backoffInitial, Duration backoffMax, Duration keepaliveTime,
                         int pageSize, int maxInboundBytes, SslContext sslContext, String user, String password) {
        this.endpoints = endpoints;
        this.tls = tls;
        this.prefix = prefix;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.backoffInitial = backoffInitial;
        this.backoffMax = backoffMax;
        this.keepaliveTime = keepaliveTime;
        this.pageSize = pageSize;
        this.maxInboundBytes = maxInboundBytes;
        this.sslContext = sslContext;
        this.user = user;
        this.password = password;
    }

    /**
     * Reads every connection key through its catalog declaration and checks them all.
     *
     * @throws ConfigurationException naming the first bad key and its value
     */
    static EtcdSettings read(Settings s) {
        // Each value is checked against its own declaration as it is read; the checks across keys follow.
        List<String> endpointItems = s.find(EtcdKeys.ENDPOINTS).orElse(List.of());
        String prefix = s.get(EtcdKeys.PREFIX);
        Duration connectTimeout = s.get(EtcdKeys.CONNECT_TIMEOUT);
        Duration requestTimeout = s.get(EtcdKeys.REQUEST_TIMEOUT);
        Duration backoffInitial = s.get(EtcdKeys.BACKOFF_INITIAL);
        Duration backoffMax = s.get(EtcdKeys.BACKOFF_MAX);
        Duration keepaliveTime = s.get(EtcdKeys.KEEPALIVE_TIME);
        int pageSize = s.get(EtcdKeys.PAGE_SIZE);
        Optional<String> ca = s.find(EtcdKeys.TLS_CA);
        Optional<String> cert = s.find(EtcdKeys.TLS_CERT);
        Optional<String> key = s.find(EtcdKeys.TLS_KEY);
        Optional<String> user = s.find(EtcdKeys.USER);
        Optional<String> password = s.find(EtcdKeys.PASSWORD);
        boolean allowPlaintextCredentials = s.get(EtcdKeys.ALLOW_PLAINTEXT_CREDENTIALS);

        String endpointsKey = s.fullKey(ENDPOINTS);
        if (endpointItems.isEmpty()) {
            throw ConfigurationException.missing(endpointsKey,
                    "comma-separated etcd client URLs such as http://127.0.0.1:2379,http://10.0.0.2:2379");
        }
        List<URI> endpoints = new ArrayList<>();
        for (String item : endpointItems) {
            endpoints.add(parseEndpoint(endpointsKey, s.raw(ENDPOINTS).orElse(""), item));
        }
        long https = endpoints.stream().filter(u -> u.getScheme().equals("https")).count();
        if (https != 0 && https != endpoints.size()) {
            throw ConfigurationException.invalid(endpointsKey, s.raw(ENDPOINTS).orElse(""),
                    "URLs that all use http:// or all use https://, not a mix");
        }
        boolean tls = https != 0;

        if (prefix.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            throw ConfigurationException.invalid(s.fullKey(PREFIX), prefix,
                    "a key prefix without white space or control characters, such as " + EtcdKeys.PREFIX.defaultValue());
        }

        if (backoffMax.compareTo(backoffInitial) < 0) {
            throw ConfigurationException.invalid(s.fullKey(BACKOFF_MAX), s.raw(BACKOFF_MAX).orElse(backoffMax.toString()),
                    "a duration no shorter than " + s.fullKey(BACKOFF_INITIAL) + " (" + backoffInitial + ")");
        }

        Path caPath = ca.map(v -> existingFile(s.fullKey(TLS_CA), v)).orElse(null);
        Path certPath = cert.map(v -> existingFile(s.fullKey(TLS_CERT), v)).orElse(null);
        Path keyPath = key.map(v -> existingFile(s.fullKey(TLS_KEY), v)).orElse(null);
        if ((certPath == null) != (keyPath == null)) {
            String missing = certPath == null ? s.fullKey(TLS_CERT) : s.fullKey(TLS_KEY);
            String set = certPath == null ? s.fullKey(TLS_KEY) : s.fullKey(TLS_CERT);
            throw ConfigurationException.missing(missing, "a PEM file, since " + set
                    + " is set (a client certificate needs both its certificate and its private key)");
        }
        if (!tls && (caPath != null || certPath != null)) {
            String setKey = caPath != null ? s.fullKey(TLS_CA) : s.fullKey(TLS_CERT);
            throw ConfigurationException.invalid(endpointsKey, s.raw(ENDPOINTS).orElse(""),
                    "https:// URLs, since " + setKey + " is set (TLS settings apply to https:// endpoints only)");
        }
        SslContext ssl = tls ? sslContext(s, caPath, certPath, keyPath) : null;

        if (user.isPresent() != password.isPresent()) {
            String missing = user.isPresent() ? s.fullKey(PASSWORD) : s.fullKey(USER);
            String set = user.isPresent() ? s.fullKey(USER) : s.fullKey(PASSWORD);
            throw ConfigurationException.missing(missing, "a value, since " + set
                    + " is set (etcd authentication needs both the user and the password)");
        }
        if (password.isPresent() && !tls && !allowPlaintextCredentials) {
            refusePlaintextPassword(s, endpoints);
        }
        return new EtcdSettings(List.copyOf(endpoints), tls, prefix, connectTimeout, requestTimeout,
                backoffInitial, backoffMax, keepaliveTime, pageSize, MAX_INBOUND_BYTES, ssl,
                user.orElse(null), password.orElse(null));
    }

    /** These settings taking answers of at most {@code bytes}: for tests of paging, without 64 MiB of data. */
    EtcdSettings withMaxInboundBytes(int bytes) {
        return new EtcdSettings(endpoints, tls, prefix, connectTimeout, requestTimeout, backoffInitial, backoffMax,
                keepaliveTime, pageSize, bytes, sslContext, user, password);
    }

    /**
     * An etcd password over http:// crosses the network readable by anyone on the path: refused unless
     * every endpoint is loopback (written as such: a name is not resolved to decide) or the operator
     * said it is acceptable.
     */
    private static void refusePlaintextPassword(Settings s, List<URI> endpoints) {
        for (URI endpoint : endpoints) {
            if (!LoopbackHost.isLiteral(endpoint.getHost())) {
                throw new ConfigurationException(s.fullKey(PASSWORD), s.fullKey(PASSWORD) + " is set but "
                        + s.fullKey(ENDPOINTS) + " has the plaintext endpoint "
                        + PeerText.escape(endpoint.toString()) + ", which is not loopback: the password would cross"
                        + " the network unencrypted. Use https:// endpoints (" + s.fullKey(TLS_CA) + " for etcd's CA),"
                        + " or set " + s.fullKey(ALLOW_PLAINTEXT_CREDENTIALS) + "=true to send it anyway");
            }
        }
    }

    private static URI parseEndpoint(String key, String whole, String item) {
        String expected = "comma-separated etcd client URLs such as http://127.0.0.1:2379 (scheme http or https,"
                + " a host, an optional port; '" + PeerText.escape(PeerText.maskUserInfo(item)) + "' is not one)";
        URI uri;
        try {
            uri = new URI(item);
        } catch (URISyntaxException e) {
            throw ConfigurationException.invalid(key, whole, expected);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        boolean pathOk = uri.getRawPath() == null || uri.getRawPath().isEmpty() || uri.getRawPath().equals("/");
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null || !pathOk
                || uri.getRawQuery() != null || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
            throw ConfigurationException.invalid(key, whole, expected);
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        return URI.create(scheme + "://" + uri.getRawAuthority().replaceFirst(":\\d+$", "") + ":" + port);
    }

    private static Path existingFile(String key, String value) {
        Path p;
        try {
            p = Path.of(value).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw ConfigurationException.invalid(key, value, "the path of a PEM file (" + e.getReason() + ")");
        }
        if (!Files.isRegularFile(p)) {
            throw ConfigurationException.invalid(key, value, "the path of an existing PEM file; " + p
                    + (Files.exists(p) ? " is not a regular file" : " does not exist"));
        }
        if (!Files.isReadable(p)) {
            throw ConfigurationException.invalid(key, value, "a readable PEM file; " + p + " cannot be read");
        }
        return p;
    }

    /**
     * Parses the PEM files now, so that a file that is not a certificate or key fails start-up naming
     * its key. The file's content never appears in the message.
     */
    private static SslContext sslContext(Settings s, Path ca, Path cert, Path key) {
        SslContextBuilder builder = GrpcSslContexts.forClient();
        if (ca != null) {
            try {
                builder.trustManager(ca.toFile());
            } catch (RuntimeException e) {
                throw ConfigurationException.invalid(s.fullKey(TLS_CA), ca.toString(),
                        "a PEM file with one or more CA certificates (" + rootMessage(e) + ")");
            }
        }
        if (cert != null) {
            try {
                builder.keyManager(cert.toFile(), key.toFile());
            } catch (RuntimeException e) {
                throw new ConfigurationException(s.fullKey(TLS_CERT), s.fullKey(TLS_CERT) + "='" + cert + "' and "
                        + s.fullKey(TLS_KEY) + ": expected a PEM certificate and its PEM (PKCS#8) private key ("
                        + rootMessage(e) + ")");
            }
        }
        try {
            return builder.build();
        } catch (SSLException | RuntimeException e) {
            throw new ConfigurationException(s.fullKey(TLS_CA), "cannot set up TLS from " + s.fullKey(TLS_CA) + ", "
                    + s.fullKey(TLS_CERT) + " and " + s.fullKey(TLS_KEY) + ": " + rootMessage(e));
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    /**
     * A new jetcd client. Builds only objects: the connection is made by the first call. Every unary
     * call gets a deadline of {@link #requestTimeout()}; calls fail at once instead of waiting while
     * etcd is unreachable (no wait-for-ready), and jetcd's own retries are off, so that the caller's
     * backoff is the only retry loop and every failure surfaces within a bounded time.
     */
    Client newClient() {
        ClientBuilder b = Client.builder()
                .endpoints(endpoints.toArray(URI[]::new))
                .connectTimeout(connectTimeout)
                .keepaliveTime(keepaliveTime.compareTo(MIN_HTTP2_KEEPALIVE_TIME) < 0 ? MIN_HTTP2_KEEPALIVE_TIME
                        : keepaliveTime)
                .keepaliveTimeout(requestTimeout)
                .keepaliveWithoutCalls(true)
                .waitForReady(false)
                .retryMaxAttempts(0)
                .maxInboundMessageSize(maxInboundBytes)
                .interceptor(new DeadlineInterceptor(requestTimeout));
        if (sslContext != null) {
            b.sslContext(sslContext);
        }
        if (user != null) {
            b.user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
        return b.build();
    }

    /** The endpoints as written in logs and messages, e.g. {@code http://127.0.0.1:2379}. */
    String endpointList() {
        return String.join(",", endpoints.stream().map(URI::toString).toList());
    }

    String prefix() {
        return prefix;
    }

    ByteSequence prefixBytes() {
        return ByteSequence.from(prefix, StandardCharsets.UTF_8);
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    Duration connectTimeout() {
        return connectTimeout;
    }

    Duration backoffInitial() {
        return backoffInitial;
    }

    Duration backoffMax() {
        return backoffMax;
    }

    /** How often discovery asks etcd for a sign of life ({@code keepalive-time}). */
    Duration keepaliveTime() {
        return keepaliveTime;
    }

    /** Keys per range request when reading the prefix ({@code page-size}). */
    int pageSize() {
        return pageSize;
    }

    /** How long a silent etcd may go unreported by discovery: {@code keepalive-time + request-timeout}. */
    Duration silenceBound() {
        return keepaliveTime.plus(requestTimeout);
    }

    boolean tls() {
        return tls;
    }

    boolean authenticated() {
        return user != null;
    }

    /**
     * How long a caller waits for one call to complete: the gRPC deadline plus the time to connect,
     * plus a margin, so that the deadline (which cancels the call) normally fires first.
     */
    long callBudgetMillis() {
        return requestTimeout.toMillis() + connectTimeout.toMillis() + 1000;
    }

    @Override
    public String toString() {
        return "etcd[" + endpointList() + ", prefix=" + prefix + (tls ? ", tls" : "")
                + (user != null ? ", user=" + user : "") + "]";
    }

    /** Gives every unary call a deadline; streams (watch, lease keep-alive) are long-lived and get none. */
    static final class DeadlineInterceptor implements ClientInterceptor {
        private final long timeoutNanos;

        DeadlineInterceptor(Duration timeout) {
            this.timeoutNanos = timeout.toNanos();
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
                options = options.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
            }
            return next.newCall(method, options);
        }
    }
}
