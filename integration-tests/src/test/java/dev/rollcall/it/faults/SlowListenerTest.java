package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.local.WorkerFleet;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A user's snapshot listener that blocks (a slow replan, here 30 s on a latch released at the end):
 * the {@code rollcall:} channels and the other listeners go on following the fleet, over real gRPC
 * on loopback.
 */
class SlowListenerTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    /** The instance ids of the workers that answered {@code n} WorkerInfo calls through {@code channel}. */
    private static Set<String> answeredBy(ManagedChannel channel, int n) {
        WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel);
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < n; i++) {
            ids.add(stub.withDeadlineAfter(5, TimeUnit.SECONDS).workerInfo(WorkerInfoRequest.getDefaultInstance())
                    .getInstanceId());
        }
        return ids;
    }

    @Test
    void aBlockingListenerDelaysNeitherTheRollcallChannelsNorTheOtherListeners() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0"));
        String staying = fleet.worker(0).instanceId();
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery).policy(SemverRangePolicy.of("^1.0"))
                .fetchSchemas(false).build());
        CountDownLatch release = new CountDownLatch(1);
        closing(release::countDown); // closed before the resolver: its listener thread is free to stop
        List<Long> blockedOn = new CopyOnWriteArrayList<>();
        closing(r.addListener(s -> {
            blockedOn.add(s.number());
            try {
                release.await(30, TimeUnit.SECONDS); // the replan
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
        closing(r.addListener(seen::add));
        ManagedChannel channel = ManagedChannelBuilder.forTarget(r.grpcTarget()).usePlaintext().build();
        closing(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));

        discovery.push(fleet.endpoints());
        FleetSnapshot both = r.awaitWorkers(2, WAIT);
        await().atMost(WAIT).until(() -> answeredBy(channel, 10).size() == 2);

        discovery.push(List.of(fleet.worker(0).endpoint())); // the other one leaves, and keeps running
        FleetSnapshot one = r.await(s -> s.workers().size() == 1, WAIT);
        await().atMost(WAIT).until(() -> answeredBy(channel, 20).equals(Set.of(staying)));
        await().atMost(WAIT).until(() -> seen.stream().anyMatch(s -> s.number() == one.number()));

        assertThat(blockedOn).as("still in its first call").containsExactly(0L);
        assertThat(seen).extracting(FleetSnapshot::number).isSorted().contains(both.number(), one.number());
    }
}
