package dev.rollcall.discovery.consul;

import com.ecwid.consul.v1.ConsulRawClient;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.LoopbackHost;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.apache.http.HttpRequestInterceptor;
import org.apache.http.HttpResponseInterceptor;
import org.apache.http.client.config.RequestConfig;
import org.apache.http.config.RegistryBuilder;
import org.apache.http.conn.HttpConnectionFactory;
import org.apache.http.conn.ManagedHttpClientConnection;
import org.apache.http.conn.routing.HttpRoute;
import org.apache.http.conn.socket.ConnectionSocketFactory;
import org.apache.http.conn.socket.PlainConnectionSocketFactory;
import org.apache.http.conn.ssl.SSLConnectionSocketFactory;
import org.apache.http.impl.client.CloseableHttpClient;
import org.apache.http.impl.client.HttpClients;
import org.apache.http.impl.conn.DefaultManagedHttpClientConnection;
import org.apache.http.impl.conn.PoolingHttpClientConnectionManager;

/**
 * How to reach one Consul agent, from the keys that discovery and registration share: address,
 * service, ACL token, TLS files, request timeout. Immutable.
 *
 * <p>The token is kept out of {@link #toString()}, of every message, and out of consul-api: that
 * library would put it in the URL ({@code ?token=}) of agent calls and log it with the request at
 * FINEST. Instead our own HTTP client adds it as the {@code X-Consul-Token} header, after
 * consul-api has built (and logged) the request.
 */
final class ConsulSettings {

    static final String ADDRESS = ConsulKeys.relative(ConsulKeys.ADDRESS);
    static final String SERVICE = ConsulKeys.relative(ConsulKeys.SERVICE);
    static final String TOKEN = ConsulKeys.relative(ConsulKeys.TOKEN);
    static final String ALLOW_PLAINTEXT_CREDENTIALS = ConsulKeys.relative(ConsulKeys.ALLOW_PLAINTEXT_CREDENTIALS);
    static final String REQUEST_TIMEOUT = ConsulKeys.relative(ConsulKeys.REQUEST_TIMEOUT);
    static final String MAX_RESPONSE_BYTES = ConsulKeys.relative(ConsulKeys.MAX_RESPONSE_BYTES);
    static final String TLS_CA = ConsulKeys.relative(ConsulKeys.TLS_CA);
    static final String TLS_CERT = ConsulKeys.relative(ConsulKeys.TLS_CERT);
    static final String TLS_KEY = ConsulKeys.relative(ConsulKeys.TLS_KEY);
    static final String VERSION_META = ConsulKeys.relative(ConsulKeys.VERSION_META);

    /** The value of {@code version-meta} that turns the claimed version off (a blank value means unset). */
    static final String VERSION_META_OFF = "none";
    /** Consul's rule for a meta key: 1 to 128 of these, not starting with {@code consul-}. */
    private static final Pattern META_KEY = Pattern.compile("[A-Za-z0-9_-]{1,128}");
    static final String TOKEN_HEADER = "X-Consul-Token";

    /** Safe in a URL path without escaping; Consul recommends DNS-compatible names anyway. */
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,254}");


    private static final AtomicLong CONNECTIONS = new AtomicLong();

    private final String scheme;
    private final String host;          // as it goes into a URL: IPv6 in brackets
    private final int port;
    private final String service;
    private final String token;         // null when unset; never printed
    private final Duration requestTimeout;
    private final int maxResponseBytes;
    private final String maxResponseBytesKey;
    private final SSLContext sslContext; // null: the JDK's default trust for https
    private final String versionMeta;    // null: off

    private ConsulSettings(String scheme, String host, int port, String service, String token,
                             Duration requestTimeout, int maxResponseBytes, String maxResponseBytesKey,
                             SSLContext sslContext, String versionMeta) {
        this.scheme = scheme;
        this.host = host;
        this.port = port;
        this.service = service;
        this.token = token;
        this.requestTimeout = requestTimeout;
        this.maxResponseBytes = maxResponseBytes;
        this.maxResponseBytesKey = maxResponseBytesKey;
        this.sslContext = sslContext;
        this.versionMeta = versionMeta;
    }

    /** Reads and checks the shared keys; reads the TLS files (local, no network). */
    static ConsulSettings read(Settings settings) {
        String addressText = settings.get(ConsulKeys.ADDRESS);
        Optional<String> serviceText = settings.find(ConsulKeys.SERVICE);
        Optional<String> tokenText = settings.find(ConsulKeys.TOKEN);
        Duration requestTimeout = settings.get(ConsulKeys.REQUEST_TIMEOUT);
        int maxResponseBytes = settings.get(ConsulKeys.MAX_RESPONSE_BYTES);
        Optional<String> ca = settings.find(ConsulKeys.TLS_CA);
        Optional<String> cert = settings.find(ConsulKeys.TLS_CERT);
        Optional<String> key = settings.find(ConsulKeys.TLS_KEY);
        String versionMeta = settings.get(ConsulKeys.VERSION_META);
        boolean allowPlaintextCredentials = settings.get(ConsulKeys.ALLOW_PLAINTEXT_CREDENTIALS);

        URI uri = parseAddress(settings.fullKey(ADDRESS), addressText);
        String service = serviceText.orElseThrow(() -> ConfigurationException.missing(settings.fullKey(SERVICE),
                "the name of the Consul service the workers register as, e.g. rollcall-workers"));
        checkName(settings.fullKey(SERVICE), service, "a Consul service name");
        String token = tokenText.orElse(null);
        if (token != null && !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw ConfigurationException.invalid(settings.fullKey(TOKEN), token,
                    "an ACL token (printable ASCII without spaces)");
        }
        boolean https = uri.getScheme().equals("https");
        if (!https) {
            for (String k : new String[] {TLS_CA, TLS_CERT, TLS_KEY}) {
                if (settings.raw(k).isPresent()) {
                    throw new ConfigurationException(settings.fullKey(k), settings.fullKey(k) + " is set but "
                            + settings.fullKey(ADDRESS) + "=" + addressText + " is plain HTTP; use an https:// address");
                }
            }
        }
        if (token != null && !https && !allowPlaintextCredentials && !LoopbackHost.isLiteral(uri.getHost())) {
            // Anyone on the path reads the token from the header and acts as this coordinator or worker.
            throw new ConfigurationException(settings.fullKey(TOKEN), settings.fullKey(TOKEN) + " is set but "
                    + settings.fullKey(ADDRESS) + "=" + PeerText.escape(uri.toString()) + " is plain HTTP to a host"
                    + " that is not loopback: the ACL token would cross the network unencrypted. Use an https://"
                    + " address (" + settings.fullKey(TLS_CA) + " for the agent's CA), or set "
                    + settings.fullKey(ALLOW_PLAINTEXT_CREDENTIALS) + "=true to send it anyway");
        }
        if (cert.isPresent() != key.isPresent()) {
            String missing = cert.isPresent() ? TLS_KEY : TLS_CERT;
            throw ConfigurationException.missing(settings.fullKey(missing), "both " + settings.fullKey(TLS_CERT)
                    + " and " + settings.fullKey(TLS_KEY) + " for a client certificate, or neither");
        }
        SSLContext ssl = null;
        if (https && (ca.isPresent() || cert.isPresent())) {
            ssl = PemTls.sslContext(
                    ca.map(p -> new PemTls.File(settings.fullKey(TLS_CA), Path.of(p))).orElse(null),
                    cert.map(p -> new PemTls.File(settings.fullKey(TLS_CERT), Path.of(p))).orElse(null),
                    key.map(p -> new PemTls.File(settings.fullKey(TLS_KEY), Path.of(p))).orElse(null));
        }
        if (versionMeta.equals(VERSION_META_OFF)) {
            versionMeta = null;
        } else if (!META_KEY.matcher(versionMeta).matches() || versionMeta.startsWith("consul-")) {
            throw ConfigurationException.invalid(settings.fullKey(VERSION_META), versionMeta, "a Consul meta key"
                    + " (1 to 128 letters, digits, '-' and '_', not starting with consul-), or " + VERSION_META_OFF
                    + " for no claimed version");
        }
        String host = uri.getHost();
        int port = uri.getPort() > 0 ? uri.getPort() : (https ? 8501 : 8500);
        return new ConsulSettings(uri.getScheme(), host, port, service, token, requestTimeout, maxResponseBytes,
                settings.fullKey(MAX_RESPONSE_BYTES), ssl, versionMeta);
    }

    private static URI parseAddress(String key, String text) {
        String withScheme = text.contains("://") ? text : "http://" + text;
        String expected = "a Consul agent address such as http://127.0.0.1:8500, https://consul.local:8501 or 127.0.0.1:8500";
        URI uri;
        try {
            uri = new URI(withScheme.endsWith("/") ? withScheme.substring(0, withScheme.length() - 1) : withScheme);
        } catch (URISyntaxException e) {
            throw ConfigurationException.invalid(key, text, expected);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw ConfigurationException.invalid(key, text, expected + " (scheme http or https)");
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null || !uri.getRawPath().isEmpty()
                || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw ConfigurationException.invalid(key, text, expected + " (a host and port, nothing else)");
        }
        try {
            return new URI(scheme, null, uri.getHost(), uri.getPort(), null, null, null);
        } catch (URISyntaxException e) {
            throw ConfigurationException.invalid(key, text, expected);
        }
    }

    static void checkName(String key, String value, String what) {
        if (!SAFE_NAME.matcher(value).matches()) {
            throw ConfigurationException.invalid(key, value,
                    what + ": letters, digits, '-', '_' and '.', starting with a letter or digit");
        }
    }

    /**
     * A new HTTP client for this agent: the given read timeout, connect and pool timeouts of
     * {@code request-timeout}, TLS when the address is https, the token header on every request, no
     * redirects (a redirect must not carry the token elsewhere), no automatic retries (callers
     * retry with their own backoff, and Apache's retries log through java.util.logging), no answer
     * read past {@code max-response-bytes} ({@link BoundedAnswers}). The caller closes it.
     */
    CloseableHttpClient newHttpClient(Duration readTimeout) {
        return newHttpClient(readTimeout, null);
    }

    /**
     * As {@link #newHttpClient(Duration)}, with {@code onResponse} called with every response on
     * the thread that made the request (for the headers consul-api does not pass on).
     */
    CloseableHttpClient newHttpClient(Duration readTimeout, HttpResponseInterceptor onResponse) {
        SSLConnectionSocketFactory tls = sslContext != null
                ? new SSLConnectionSocketFactory(sslContext, SSLConnectionSocketFactory.getDefaultHostnameVerifier())
                : SSLConnectionSocketFactory.getSocketFactory();
        // Plain connections, never Apache's logging ones: with DEBUG on org.apache.http.headers those
        // print every request header, the token included.
        HttpConnectionFactory<HttpRoute, ManagedHttpClientConnection> quiet = (route, config) ->
                new DefaultManagedHttpClientConnection("rollcall-consul-" + CONNECTIONS.incrementAndGet(), 8 * 1024);
        PoolingHttpClientConnectionManager pool = new PoolingHttpClientConnectionManager(
                RegistryBuilder.<ConnectionSocketFactory>create()
                        .register("http", PlainConnectionSocketFactory.getSocketFactory())
                        .register("https", tls)
                        .build(), quiet);
        pool.setMaxTotal(4);
        pool.setDefaultMaxPerRoute(4);
        pool.setValidateAfterInactivity(1_000);
        int timeout = (int) Math.min(Integer.MAX_VALUE, requestTimeout.toMillis());
        RequestConfig config = RequestConfig.custom()
                .setConnectTimeout(timeout)
                .setConnectionRequestTimeout(timeout)
                .setSocketTimeout((int) Math.min(Integer.MAX_VALUE, readTimeout.toMillis()))
                .setRedirectsEnabled(false)
                .build();
        String secret = token;
        HttpRequestInterceptor addToken = (request, context) -> {
            if (secret != null) {
                request.setHeader(TOKEN_HEADER, secret);
            }
        };
        return HttpClients.custom()
                .setConnectionManager(pool)
                .setDefaultRequestConfig(config)
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableAutomaticRetries()      // the watch and the heartbeat retry on their own terms
                .addInterceptorLast(addToken)
                .addInterceptorLast(new BoundedAnswers(maxResponseBytes, maxResponseBytesKey))
                .addInterceptorLast(onResponse != null ? onResponse : (HttpResponseInterceptor) (response, context) -> { })
                .setUserAgent("rollcall-discovery-consul")
                .build();
    }

    /** consul-api's raw client over {@code http}; it never sees the token. */
    ConsulRawClient rawClient(CloseableHttpClient http) {
        return new ConsulRawClient(http, scheme + "://" + host, port, "");
    }

    String address() {
        return scheme + "://" + host + ":" + port;
    }

    String service() {
        return service;
    }

    /**
     * The service meta key that holds a worker's version ({@code version-meta}): registration
     * writes it, discovery reads it as the claimed version; empty when turned off.
     */
    Optional<String> versionMeta() {
        return Optional.ofNullable(versionMeta);
    }

    boolean hasToken() {
        return token != null;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** The largest answer read ({@code max-response-bytes}). */
    int maxResponseBytes() {
        return maxResponseBytes;
    }

    @Override
    public String toString() {
        return "consul " + address() + " service '" + service + "'" + (token != null ? " (ACL token set)" : "");
    }
}
