package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Scenario 7's killed coordinator, in a JVM of its own: an exact-drain resolver watching the worker
 * at {@code 127.0.0.1:<port>} that takes a lease and never closes it; prints {@code leased}, then
 * waits for SIGKILL.
 */
public final class LeaseHolderMain {

    private LeaseHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(WorkerEndpoint.of("127.0.0.1", Integer.parseInt(args[0]))));
        WorkerResolver resolver = WorkerResolver.builder().name("bench-doomed").discovery(discovery)
                .policy(VersionPolicy.rule(w -> Verdict.accept())).fetchSchemas(false).exactDrain(true).build();
        resolver.awaitWorkers(1, Duration.ofSeconds(30));
        SnapshotLease lease = resolver.lease();
        System.out.println("leased " + lease.snapshot().number());
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
