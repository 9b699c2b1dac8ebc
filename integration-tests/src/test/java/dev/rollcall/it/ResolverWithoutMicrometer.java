package dev.rollcall.it;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;

/**
 * A coordinator in a JVM of its own, started by {@code FleetEventsTest} with this module's class
 * path minus Micrometer (which the fleet service, {@code rollcall-server}, brings to it): says whether
 * Micrometer is absent, then resolves one real worker. Prints {@code no micrometer, N workers} and
 * exits 0, or exits 1 saying what went wrong.
 */
public final class ResolverWithoutMicrometer {

    private ResolverWithoutMicrometer() {
    }

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry");
            System.out.println("micrometer is on the class path");
            System.exit(1);
        } catch (ClassNotFoundException expected) {
            // the point: the resolver must not need it
        }
        PushDiscovery discovery = new PushDiscovery();
        try (WorkerFleet fleet = WorkerFleet.start("1.0.0");
             WorkerResolver resolver = WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                     .build()) {
            discovery.push(fleet.endpoints());
            int workers = resolver.awaitWorkers(1, Duration.ofSeconds(30)).workers().size();
            System.out.println("no micrometer, " + workers + " workers");
        }
        System.exit(0);
    }
}
