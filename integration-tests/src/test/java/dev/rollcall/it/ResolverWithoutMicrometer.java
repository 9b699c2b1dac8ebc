package dev.rollcall.it;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * A coordinator in a JVM of its own, started by {@code FleetEventsTest} with this module's class
 * path minus Micrometer (which the fleet service, {@code rollcall-server}, brings to it): says whether
 * Micrometer is absent, then resolves the workers whose URLs its first argument lists (comma-separated;
 * they run in the test's JVM, so that this one needs no Arrow and no JVM flag). Prints {@code no micrometer, N workers} and
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
        try (WorkerResolver resolver = WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .build()) {
            discovery.push(Arrays.stream(args[0].split(",")).map(WorkerEndpoint::parse).collect(Collectors.toSet()));
            int workers = resolver.awaitWorkers(1, Duration.ofSeconds(30)).workers().size();
            System.out.println("no micrometer, " + workers + " workers");
        }
        System.exit(0);
    }
}
