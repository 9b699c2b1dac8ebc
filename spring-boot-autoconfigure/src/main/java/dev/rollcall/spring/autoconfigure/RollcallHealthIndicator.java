package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.Readiness;
import dev.rollcall.core.WorkerResolver;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The coordinator's readiness as Rollcall sees it: {@code UP} while {@link WorkerResolver#ready()}
 * (at least {@code rollcall.readiness.min-workers} compatible workers, of
 * {@code rollcall.readiness.version} when set, discovery not stale for longer than
 * {@code rollcall.readiness.max-stale}), {@code OUT_OF_SERVICE} otherwise — before the fleet is
 * there, again when it falls below, and while discovery has been failing too long. Details: the counts, the reason, the snapshot number and
 * the policy. Answers from the current snapshot without blocking; any thread.
 */
public final class RollcallHealthIndicator implements HealthIndicator {

    private final WorkerResolver resolver;

    public RollcallHealthIndicator(WorkerResolver resolver) {
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    @Override
    public Health health() {
        FleetSnapshot snapshot = resolver.pin();
        Readiness readiness = resolver.ready();
        Health.Builder health = readiness.ready() ? Health.up() : Health.outOfService();
        return health.withDetail("compatibleWorkers", readiness.compatibleWorkers())
                .withDetail("requiredWorkers", readiness.required())
                .withDetail("reason", readiness.reason())
                .withDetail("snapshot", snapshot.number())
                .withDetail("policy", snapshot.policy())
                .build();
    }
}
