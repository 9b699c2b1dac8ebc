package dev.rollcall.discovery.etcd;

import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the {@code etcd} discovery backend ({@code rollcall.discovery.type=etcd}): the candidate
 * workers are the keys under a prefix in etcd, {@code <prefix><worker-id>}, each holding the worker's
 * URL ({@code grpc://10.0.0.5:7001}) or a JSON object with its endpoint and labels
 * ({@code {"endpoint":"grpc://10.0.0.5:7001","labels":{"zone":"eu-1"}}}), as
 * the registration writes them. The module's README lists every key under
 * {@code rollcall.discovery.etcd.} with its default.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key (endpoints, prefix, timeouts, backoff, TLS files, user and password) and throws
 * {@link dev.rollcall.api.ConfigurationException} naming the full key for a bad one, the password
 * masked; it reads the TLS files to check them but does not contact etcd. The backend it returns
 * does everything else on its own daemon thread, {@code rollcall-etcd-watch} (a watch response on
 * jetcd's callback thread when that one is idle): see its
 * {@link WorkerDiscovery#start} and {@link WorkerDiscovery#close}.
 */
public final class EtcdWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdWorkerDiscoveryProvider.class);

    static final String TYPE = "etcd";

    /** Needed by {@link java.util.ServiceLoader}. */
    public EtcdWorkerDiscoveryProvider() {
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        EtcdSettings etcd = EtcdSettings.read(settings);
        if (!etcd.prefix().endsWith("/")) {
            LOG.warn("{}={} does not end with '/': it also matches keys such as {}-old/..., which are then read as"
                    + " workers", settings.fullKey(EtcdSettings.PREFIX), etcd.prefix(), etcd.prefix());
        }
        return new EtcdWorkerDiscovery(etcd);
    }
}
