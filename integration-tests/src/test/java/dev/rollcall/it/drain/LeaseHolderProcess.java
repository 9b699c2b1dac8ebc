package dev.rollcall.it.drain;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A coordinator in a JVM of its own, for a test to kill with SIGKILL: an exact-drain resolver
 * watching the worker at {@code 127.0.0.1:<port>} (the argument) that takes a lease on a snapshot
 * listing it and never closes it. Prints {@code leased} once it holds one; then waits to be killed.
 */
public final class LeaseHolderProcess {

    private LeaseHolderProcess() {
    }

    public static void main(String[] args) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        discovery.push(List.of(WorkerEndpoint.of("127.0.0.1", Integer.parseInt(args[0]))));
        WorkerResolver resolver = WorkerResolver.builder().name("doomed").discovery(discovery)
                .policy(w -> Verdict.accept()).fetchSchemas(false).exactDrain(true).build();
        resolver.awaitWorkers(1, Duration.ofSeconds(30));
        SnapshotLease lease = resolver.lease(); // never closed: only the kill ends this coordinator's hold
        System.out.println("leased " + lease.snapshot().number());
        System.out.flush();
        new CountDownLatch(1).await(); // until SIGKILL
    }
}
