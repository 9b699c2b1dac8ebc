package dev.rollcall.discovery.dns;

import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;

/**
 * Creates the {@code dns} discovery backend ({@code rollcall.discovery.type=dns}): the candidate
 * workers are the A, AAAA or SRV records of one name, such as a Kubernetes headless Service's
 * ({@code workers.default.svc.cluster.local}, or {@code _grpc._tcp.workers.default.svc.cluster.local}
 * for SRV). A and AAAA records give addresses, to which the configured {@code port} and
 * {@code scheme} are added; SRV records give a target and a port each, and their priority, weight
 * and target travel as the labels {@code srv.priority}, {@code srv.weight} and {@code srv.target}.
 * The module's README lists every key under {@code rollcall.discovery.dns.} with its default.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key and throws {@link dev.rollcall.api.ConfigurationException} naming the full key
 * for a bad one; it does not contact any DNS server. The backend it returns does everything else on
 * its own daemon thread, {@code rollcall-dns-resolve}: see its {@link WorkerDiscovery#start} and
 * {@link WorkerDiscovery#close}.
 */
public final class DnsWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    static final String TYPE = "dns";

    /** Needed by {@link java.util.ServiceLoader}. */
    public DnsWorkerDiscoveryProvider() {
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        return new DnsWorkerDiscovery(DnsSettings.read(settings));
    }
}
