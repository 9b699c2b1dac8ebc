package dev.rollcall.discovery.consul;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers workers with Consul ({@code rollcall.discovery.type=consul} and
 * {@code rollcall.worker.register=true}) as instances of the service that {@code consul}
 * discovery watches, each with a TTL check that the worker keeps passing; see
 * the module README.
 *
 * <p>It reads the connection keys shared with discovery under {@code rollcall.discovery.consul.}
 * ({@code address}, {@code service}, {@code token}, {@code request-timeout}, {@code tls.*}) and
 * {@code tag} (the coordinators' filter: those tags are added to the instance, so the worker
 * passes it), plus its own keys:
 * <ul>
 *   <li>{@code registration.check-ttl}: the TTL of the
 *       check; the worker marks it passing every third of it;</li>
 *   <li>{@code registration.deregister-after}: how long the check may stay
 *       critical before Consul removes the instance (Consul's minimum is 1m; it raises smaller
 *       values to it);</li>
 *   <li>{@code registration.service-id} (default {@code <service>-<host>-<port>}): the instance ID;</li>
 *   <li>{@code registration.tags}: more tags for the instance.</li>
 * </ul>
 * Defaults and bounds: {@link ConsulKeys}.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} checks
 * every key and does no network I/O; {@link WorkerRegistration#start()} then blocks until the agent
 * has acknowledged the registration (within {@code request-timeout}).
 */
public final class ConsulRegistrationProvider implements WorkerRegistrationProvider {

    private static final Logger LOG = LoggerFactory.getLogger(ConsulRegistrationProvider.class);

    static final String CHECK_TTL = ConsulKeys.relative(ConsulKeys.REGISTRATION_CHECK_TTL);
    static final String DEREGISTER_AFTER = ConsulKeys.relative(ConsulKeys.REGISTRATION_DEREGISTER_AFTER);
    static final String SERVICE_ID = ConsulKeys.relative(ConsulKeys.REGISTRATION_SERVICE_ID);
    static final String TAGS = ConsulKeys.relative(ConsulKeys.REGISTRATION_TAGS);

    static final Duration CONSUL_MIN_DEREGISTER_AFTER = Duration.ofMinutes(1);

    /** Needed by {@link java.util.ServiceLoader}. */
    public ConsulRegistrationProvider() {
    }

    @Override
    public String type() {
        return ConsulWorkerDiscoveryProvider.TYPE;
    }

    /**
     * Reads and checks every key (and the TLS files); sends nothing: {@link WorkerRegistration#start()}
     * registers.
     */
    @Override
    public WorkerRegistration create(WorkerInfo self, Settings settings) {
        Objects.requireNonNull(self, "self");
        // The worker-only keys first, then the shared ones; the checks across keys follow.
        List<String> filterTags = settings.find(ConsulKeys.TAG).orElse(List.of());
        List<String> extraTags = settings.find(ConsulKeys.REGISTRATION_TAGS).orElse(List.of());
        Optional<String> serviceId = settings.find(ConsulKeys.REGISTRATION_SERVICE_ID);
        Optional<String> afterText = settings.raw(DEREGISTER_AFTER);
        ConsulSettings connection = ConsulSettings.read(settings);
        Duration ttl = settings.get(ConsulKeys.REGISTRATION_CHECK_TTL);
        Duration after = settings.get(ConsulKeys.REGISTRATION_DEREGISTER_AFTER);

        serviceId.ifPresent(id -> ConsulSettings.checkName(settings.fullKey(SERVICE_ID), id, "a Consul service ID"));
        if (after.compareTo(CONSUL_MIN_DEREGISTER_AFTER) < 0) {
            LOG.info("{}={}: Consul removes critical instances after at least 1m (and checks every 30s); "
                    + "a real agent raises it", settings.fullKey(DEREGISTER_AFTER), afterText.orElse(after.toString()));
        }
        Set<String> tags = new LinkedHashSet<>(filterTags);
        tags.addAll(extraTags);
        ConsulRegistration.RegistrationSettings registration = new ConsulRegistration.RegistrationSettings(
                ttl, after, serviceId.orElse(null), new ArrayList<>(tags));
        return ConsulRegistration.of(self, connection, registration);
    }
}
