package dev.rollcall.discovery.consul;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;

/**
 * Creates the {@code consul} discovery backend ({@code rollcall.discovery.type=consul}): the
 * instances of one Consul service, followed with blocking queries on
 * {@code /v1/health/service/<service>}, become the candidate workers. Keys, under
 * {@code rollcall.discovery.consul.}:
 *
 * <ul>
 *   <li>{@code service} (required): the Consul service name;</li>
 *   <li>{@code address}: the agent, {@code http://} or
 *       {@code https://}, host and port;</li>
 *   <li>{@code passing-only}: only instances whose checks all pass;</li>
 *   <li>{@code tag}: tags an instance must all have; {@code node-meta}: {@code key:value} pairs its
 *       node must have; {@code datacenter}: another datacenter than the agent's;</li>
 *   <li>{@code token}: the ACL token, sent as the {@code X-Consul-Token} header only, never
 *       logged;</li>
 *   <li>{@code wait}: how long one blocking query may wait, in whole seconds;
 *       {@code request-timeout}: connect timeout, and the margin
 *       the read timeout keeps beyond {@code wait + wait/16};</li>
 *   <li>{@code backoff.initial} / {@code backoff.max}: retry
 *       delays after failures;</li>
 *   <li>{@code tls.ca}, {@code tls.cert}, {@code tls.key}: PEM files for an {@code https} address.</li>
 * </ul>
 * Defaults and bounds: {@link ConsulKeys}.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key (and reads the TLS files) and throws {@link ConfigurationException} naming the
 * full key for a bad one; it does not contact Consul: an unreachable agent is a runtime condition
 * reported through the listener.
 */
public final class ConsulWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    static final String TYPE = "consul";

    /** Needed by {@link java.util.ServiceLoader}. */
    public ConsulWorkerDiscoveryProvider() {
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        // Both readers run before either throws, so that every supported key counts as read.
        ConfigurationException first = null;
        ConsulSettings connection = null;
        HealthQuery query = null;
        try {
            connection = ConsulSettings.read(settings);
        } catch (ConfigurationException e) {
            first = e;
        }
        try {
            query = HealthQuery.read(settings);
        } catch (ConfigurationException e) {
            first = first != null ? first : e;
        }
        if (first != null) {
            throw first;
        }
        return new ConsulWorkerDiscovery(connection, query);
    }
}
