package dev.rollcall.cli;

import static org.awaitility.Awaitility.await;

import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import dev.rollcall.testkit.FinestLogCapture;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** {@link SecretsNeverLeakTest}'s exact-drain flows: where holder ids travel and could be written down. */
final class HolderIdFlows {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private HolderIdFlows() {
    }

    /**
     * Exact drain with a real worker W and a recording worker F in one exact-drain resolver's
     * discovery, and a holder of W's that the test plays with {@code holderId}: a stranger's
     * release of W (refused), the holder's own, W's close under an open lease, then F's drain,
     * whose release F refuses echoing the id it was sent whole.
     */
    static void run(SecretsNeverLeakTest.CapturedText seen, FinestLogCapture capture, String holderId,
                    Map<String, String> sentHolderIds) throws Exception {
        PushDiscovery discovery = new PushDiscovery();
        try (HolderRecordingWorker f = HolderRecordingWorker.start();
             RollcallWorker w = RollcallWorker.builder().version("1.4.0").shutdownGrace(WAIT).drainQuiet(WAIT)
                     .start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", w.port()).usePlaintext().build();
            try (WorkerResolver resolver = WorkerResolver.builder().name("secrets-exact").discovery(discovery)
                    .policy(worker -> Verdict.accept()).fetchSchemas(false).exactDrain(true).build()) {
                discovery.push(List.of(w.endpoint(), f.endpoint()));
                resolver.awaitWorkers(2, WAIT);
                await().atMost(WAIT).until(() -> !f.holderIds().isEmpty());
                sentHolderIds.put("the holder id the resolver sent a worker", f.holderIds().get(0));
                List<WorkerInfoResponse> heldAnswers = new CopyOnWriteArrayList<>();
                WorkerServiceGrpc.newStub(channel).watchWorkerInfo(
                        WorkerInfoRequest.newBuilder().setHolderId(holderId).build(), new StreamObserver<>() {
                            @Override
                            public void onNext(WorkerInfoResponse answer) {
                                heldAnswers.add(answer);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
                await().atMost(WAIT).until(() -> w.coordinatorsHolding() == 2);
                WorkerServiceGrpc.WorkerServiceBlockingStub releases = WorkerServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                CompletableFuture<Void> closed;
                try (SnapshotLease lease = resolver.lease()) {
                    closed = CompletableFuture.runAsync(w::close);
                    resolver.await(s -> s.status(w.endpoint().url()).map(st -> st.state()
                            != WorkerStatus.State.COMPATIBLE).orElse(true), WAIT);
                    try { // refused (ExactDrainHolderIdTest says so); here only what it writes matters
                        seen.add("a stranger's release", releases.releaseWorker(ReleaseWorkerRequest.newBuilder()
                                .setHolderId("stranger-" + UUID.randomUUID()).setInstanceId(w.instanceId()).build()));
                    } catch (StatusRuntimeException e) {
                        seen.add("a stranger's release refused", e);
                    }
                    seen.add("the holder's own release", releases.releaseWorker(ReleaseWorkerRequest.newBuilder()
                            .setHolderId(holderId).setInstanceId(w.instanceId()).build()));
                    f.drain();
                    seen.add("resolver (exact drain)", resolver, lease.snapshot(), w, heldAnswers);
                }
                closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                await().atMost(WAIT).until(() -> !f.releasedWith().isEmpty()
                        && capture.text().contains("ReleaseWorker for instance recording-1"));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
