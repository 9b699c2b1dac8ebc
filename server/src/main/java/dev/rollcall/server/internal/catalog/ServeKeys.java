package dev.rollcall.server.internal.catalog;

import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * Where each {@code rollcall.serve.*} key is defined, once: the server's internals read these,
 * and the public {@link dev.rollcall.server.ServerKeys} (the catalog {@link java.util.ServiceLoader}
 * finds) hands out the same objects. Here, not in {@code ServerKeys}, so that the internals never
 * point back at the public package. Stateless.
 */
public final class ServeKeys {

    private static final String SERVER = "rollcall-server";

    public static final SettingKey<String> HOST = SettingKey.define(SERVER, "rollcall.serve.host", SettingType.TEXT,
            "address both ports bind; 0.0.0.0 to serve beyond this host").byDefault("127.0.0.1");
    public static final SettingKey<Integer> PORT = SettingKey.define(SERVER, "rollcall.serve.port",
            SettingType.WHOLE_NUMBER, "the gRPC port of rollcall.v1.FleetService; 0: any free port").byDefault(7700)
            .atLeast(0).atMost(65535);
    public static final SettingKey<Integer> HTTP_PORT = SettingKey.define(SERVER, "rollcall.serve.http-port",
            SettingType.WHOLE_NUMBER, "the HTTP port of /readyz, /healthz, /metrics and the console; 0: any free port")
            .byDefault(7701).atLeast(0).atMost(65535);
    public static final SettingKey<String> TLS_CERT = SettingKey.define(SERVER, "rollcall.serve.tls.cert",
            SettingType.TEXT, "PEM certificate chain: serve the fleet API over TLS; needs tls.key");
    public static final SettingKey<String> TLS_KEY = SettingKey.define(SERVER, "rollcall.serve.tls.key",
            SettingType.TEXT, "PEM PKCS#8 private key of tls.cert (never logged or shown)");
    public static final SettingKey<String> TLS_CLIENT_CA = SettingKey.define(SERVER, "rollcall.serve.tls.client-ca",
            SettingType.TEXT, "PEM CA certificate(s): require a client certificate they signed; needs tls.cert");
    public static final SettingKey<String> TOKEN_FILE = SettingKey.define(SERVER, "rollcall.serve.token-file",
            SettingType.TEXT, "a file holding the bearer token every fleet API call must carry (read at start,"
                    + " never logged); unset: no token");
    public static final SettingKey<Integer> MAX_WATCHERS = SettingKey.define(SERVER, "rollcall.serve.max-watchers",
            SettingType.WHOLE_NUMBER, "WatchFleet streams open at once in all").byDefault(4096).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_WATCHERS_PER_CONNECTION = SettingKey.define(SERVER,
            "rollcall.serve.max-watchers-per-connection", SettingType.WHOLE_NUMBER,
            "WatchFleet streams open at once over one connection").byDefault(16).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_HOLDS = SettingKey.define(SERVER, "rollcall.serve.max-holds",
            SettingType.WHOLE_NUMBER, "HoldFleet streams open at once in all").byDefault(16384).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_HOLDS_PER_CONNECTION = SettingKey.define(SERVER,
            "rollcall.serve.max-holds-per-connection", SettingType.WHOLE_NUMBER,
            "HoldFleet streams open at once over one connection").byDefault(1024).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_REQUEST_BYTES = SettingKey.define(SERVER,
            "rollcall.serve.max-request-bytes", SettingType.WHOLE_NUMBER,
            "largest request message of the fleet API").byDefault(4096).atLeast(64).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Duration> KEEPALIVE_TIME = SettingKey.define(SERVER,
            "rollcall.serve.keepalive-time", SettingType.DURATION,
            "how long a connection may be silent before the service pings it (a silent host's holds end after"
                    + " this and keepalive-timeout)").byDefault(Duration.ofSeconds(20)).above(Duration.ZERO);
    public static final SettingKey<Duration> KEEPALIVE_TIMEOUT = SettingKey.define(SERVER,
            "rollcall.serve.keepalive-timeout", SettingType.DURATION,
            "how long a ping may go unanswered before the connection, and its watches and holds, end")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);

    public static final SettingKey<Boolean> XDS_ENABLED = SettingKey.define(SERVER, "rollcall.serve.xds.enabled",
            SettingType.BOOLEAN, "serve xDS (ADS) on rollcall.serve.port beside the fleet API").byDefault(true);
    public static final SettingKey<String> XDS_FLEET = SettingKey.define(SERVER, "rollcall.serve.xds.fleet",
            SettingType.TEXT, "the name xDS clients dial (xds:///NAME): the Listener, RouteConfiguration, Cluster and"
                    + " ClusterLoadAssignment the ADS door publishes for this fleet").byDefault("fleet");
    public static final SettingKey<Integer> XDS_MAX_STREAMS = SettingKey.define(SERVER, "rollcall.serve.xds.max-streams",
            SettingType.WHOLE_NUMBER, "xDS ADS streams open at once in all").byDefault(4096).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> XDS_MAX_STREAMS_PER_CONNECTION = SettingKey.define(SERVER,
            "rollcall.serve.xds.max-streams-per-connection", SettingType.WHOLE_NUMBER,
            "xDS ADS streams open at once over one connection").byDefault(16).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> XDS_MAX_RESOURCES_PER_STREAM = SettingKey.define(SERVER,
            "rollcall.serve.xds.max-resources-per-stream", SettingType.WHOLE_NUMBER,
            "resource names one ADS stream may subscribe to, all types together (a gRPC channel takes 4)")
            .byDefault(256).atLeast(4).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> XDS_MAX_REQUEST_BYTES = SettingKey.define(SERVER,
            "rollcall.serve.xds.max-request-bytes", SettingType.WHOLE_NUMBER,
            "largest DiscoveryRequest (Envoy's node description alone can take tens of KiB)").byDefault(65536)
            .atLeast(1024).atMost(Integer.MAX_VALUE);

    /** Every key, in the order of docs/configuration.md's table. */
    public static final List<SettingKey<?>> ALL = List.of(HOST, PORT, HTTP_PORT, TLS_CERT, TLS_KEY, TLS_CLIENT_CA, TOKEN_FILE, MAX_WATCHERS, MAX_WATCHERS_PER_CONNECTION, MAX_HOLDS, MAX_HOLDS_PER_CONNECTION, MAX_REQUEST_BYTES, KEEPALIVE_TIME, KEEPALIVE_TIMEOUT, XDS_ENABLED, XDS_FLEET, XDS_MAX_STREAMS, XDS_MAX_STREAMS_PER_CONNECTION, XDS_MAX_RESOURCES_PER_STREAM, XDS_MAX_REQUEST_BYTES);

    private ServeKeys() {
    }
}
