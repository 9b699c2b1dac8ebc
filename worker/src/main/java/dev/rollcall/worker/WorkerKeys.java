package dev.rollcall.worker;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * Every {@code rollcall.worker.*} key the worker reads, each declared once; the worker's readers,
 * the Spring Boot metadata and docs/configuration.md's table take names, defaults and bounds from
 * here. Found by {@link java.util.ServiceLoader}. Stateless.
 */
public final class WorkerKeys implements KeyCatalog {

    private static final String WORKER = "rollcall-worker";

    public static final SettingKey<Boolean> REGISTER = SettingKey.define(WORKER, "rollcall.worker.register",
            SettingType.BOOLEAN, "register with the backend named by rollcall.discovery.type").byDefault(false);
    public static final SettingKey<String> HOST = SettingKey.define(WORKER, "rollcall.worker.host", SettingType.TEXT,
            "address to bind").byDefault("127.0.0.1");
    public static final SettingKey<Integer> PORT = SettingKey.define(WORKER, "rollcall.worker.port",
            SettingType.WHOLE_NUMBER, "port to bind; 0: any free port").byDefault(0).atLeast(0).atMost(65535);
    public static final SettingKey<String> ADVERTISE_HOST = SettingKey.define(WORKER, "rollcall.worker.advertise-host",
            SettingType.TEXT, "the host coordinators reach; required to register a worker bound to 0.0.0.0")
            .derivedDefault("the bound host");
    public static final SettingKey<Duration> SHUTDOWN_GRACE = SettingKey.define(WORKER,
            "rollcall.worker.shutdown-grace", SettingType.DURATION,
            "how long close() lets in-flight calls finish after it drained").byDefault(Duration.ofSeconds(5));
    public static final SettingKey<Duration> DRAIN_QUIET = SettingKey.define(WORKER, "rollcall.worker.drain-quiet",
            SettingType.DURATION, "after draining, close() waits until no call started for this long (at most"
                    + " shutdown-grace)").byDefault(Duration.ofMillis(500));
    public static final SettingKey<Boolean> REFLECTION = SettingKey.define(WORKER, "rollcall.worker.reflection",
            SettingType.BOOLEAN, "serve gRPC server reflection").byDefault(true);
    public static final SettingKey<String> TLS_CERT = SettingKey.define(WORKER, "rollcall.worker.tls.cert",
            SettingType.TEXT, "PEM certificate chain: serve TLS (grpcs://); needs tls.key");
    public static final SettingKey<String> TLS_KEY = SettingKey.define(WORKER, "rollcall.worker.tls.key",
            SettingType.TEXT, "PEM PKCS#8 private key of tls.cert (never logged or shown)");
    public static final SettingKey<String> TLS_CLIENT_CA = SettingKey.define(WORKER, "rollcall.worker.tls.client-ca",
            SettingType.TEXT, "PEM CA certificate(s): require a client certificate they signed; needs tls.cert");
    public static final SettingKey<Integer> MAX_REQUEST_BYTES = SettingKey.define(WORKER,
            "rollcall.worker.max-request-bytes", SettingType.WHOLE_NUMBER,
            "largest request of Rollcall's own calls and of gRPC reflection").byDefault(4096).atLeast(64)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_WATCHES = SettingKey.define(WORKER, "rollcall.worker.max-watches",
            SettingType.WHOLE_NUMBER, "WatchWorkerInfo streams served at once in all").byDefault(WorkerInfoService.DEFAULT_MAX_WATCHES).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_WATCHES_PER_CONNECTION = SettingKey.define(WORKER,
            "rollcall.worker.max-watches-per-connection", SettingType.WHOLE_NUMBER,
            "WatchWorkerInfo streams at once over one connection")
            .byDefault(WorkerInfoService.DEFAULT_MAX_WATCHES_PER_CONNECTION).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> MAX_CALLS_PER_CONNECTION = SettingKey.define(WORKER,
            "rollcall.worker.max-calls-per-connection", SettingType.WHOLE_NUMBER,
            "calls of any kind open at once on one connection").byDefault(250).atLeast(1).atMost(Integer.MAX_VALUE);

    private static final List<SettingKey<?>> KEYS = List.of(REGISTER, HOST, PORT, ADVERTISE_HOST, SHUTDOWN_GRACE,
            DRAIN_QUIET, REFLECTION, TLS_CERT, TLS_KEY, TLS_CLIENT_CA, MAX_REQUEST_BYTES, MAX_WATCHES,
            MAX_WATCHES_PER_CONNECTION, MAX_CALLS_PER_CONNECTION);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
