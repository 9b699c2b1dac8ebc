package dev.rollcall.conformance;

import dev.rollcall.protocol.v1.Capability;
import dev.rollcall.protocol.v1.ReleaseWorkerRequest;
import dev.rollcall.protocol.v1.ReleaseWorkerResponse;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@code rollcall.v1} worker written by hand on grpc-java, as a team in another stack would write
 * one, with one fault switched on at a time: a new instance id on every call, a stream that never
 * pushes a change, an answer out of bounds (its version, or its capabilities), heartbeats far more often than granted, a
 * {@code ReleaseWorker} that checks neither the holder id nor the instance id, revisions that go back;
 * or written before revisions and heartbeats existed (not a fault: both are recommended). Without a fault it
 * serves no {@code ReleaseWorker} (a worker from before exact drain) and keeps every rule, so that a test can
 * say the kit names exactly the broken one. On 127.0.0.1, a free port.
 */
final class HandmadeWorker extends WorkerServiceGrpc.WorkerServiceImplBase implements AutoCloseable {

    enum Fault {
        NONE, NEW_ID_EVERY_CALL, NEVER_PUSHES, VERSION_TOO_LONG, REPEATS_EVERY_50_MS, RELEASES_ANYTHING,
        /** Written from the .proto before revisions and heartbeats: revision 0 in every answer, no heartbeat granted. */
        NO_REVISIONS_NO_HEARTBEATS,
        /** Its change goes under a lower revision than the answer before it. */
        REVISIONS_GO_BACK,
        /** 129 capabilities, one over the bound. */
        TOO_MANY_CAPABILITIES,
        /** One capability's name twice, at two versions. */
        CAPABILITY_NAMED_TWICE,
        /** A capability's version with a terminal escape in it. */
        CAPABILITY_VERSION_WITH_AN_ESCAPE
    }

    private final Fault fault;
    private final Server server;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "handmade-worker-timer");
        t.setDaemon(true);
        return t;
    });
    private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
    private final AtomicBoolean changeScheduled = new AtomicBoolean();
    private volatile WorkerInfoResponse current;

    private HandmadeWorker(Fault fault) {
        this.fault = fault;
        this.current = WorkerInfoResponse.newBuilder()
                .setVersion(fault == Fault.VERSION_TOO_LONG ? "1.0.0-" + "x".repeat(300) : "1.0.0")
                .setInstanceId(UUID.randomUUID().toString()).setRevision(switch (fault) {
                    case NO_REVISIONS_NO_HEARTBEATS -> 0;
                    case REVISIONS_GO_BACK -> 10;
                    default -> 1;
                }).putLabels("zone", "a").addAllCapabilities(capabilities(fault)).build();
        try {
            this.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(this).build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Capability> capabilities(Fault fault) {
        return switch (fault) {
            case TOO_MANY_CAPABILITIES -> java.util.stream.IntStream.range(0, 129)
                    .mapToObj(i -> capability("udf:f" + i, "")).toList();
            case CAPABILITY_NAMED_TWICE -> List.of(capability("plan-protocol", "2"), capability("plan-protocol", "3"));
            case CAPABILITY_VERSION_WITH_AN_ESCAPE -> List.of(capability("datafusion", "55\u001b[2J"));
            default -> List.of(capability("udf:geo_distance", ""), capability("datafusion", "55.0.1"));
        };
    }

    private static Capability capability(String name, String version) {
        return Capability.newBuilder().setName(name).setVersion(version).build();
    }

    static HandmadeWorker start(Fault fault) {
        return new HandmadeWorker(fault);
    }

    int port() {
        return server.getPort();
    }

    /** A change of state (revision + 1), pushed to every stream unless the fault is {@code NEVER_PUSHES}. */
    synchronized void state(ServingState state) {
        long revision = switch (fault) {
            case NO_REVISIONS_NO_HEARTBEATS -> 0;
            case REVISIONS_GO_BACK -> current.getRevision() - 1;
            default -> current.getRevision() + 1;
        };
        current = current.toBuilder().setState(state).setRevision(revision).build();
        if (fault != Fault.NEVER_PUSHES) {
            watchers.forEach(w -> w.send(current));
        }
    }

    private WorkerInfoResponse answer() {
        WorkerInfoResponse r = current;
        return fault == Fault.NEW_ID_EVERY_CALL ? r.toBuilder().setInstanceId(UUID.randomUUID().toString()).build() : r;
    }

    @Override
    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
        out.onNext(answer());
        out.onCompleted();
    }

    @Override
    public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
        int granted = request.getHeartbeatMillis() == 0 || fault == Fault.NO_REVISIONS_NO_HEARTBEATS ? 0
                : Math.max(200, Math.min(60_000, request.getHeartbeatMillis()));
        Watcher w = new Watcher((ServerCallStreamObserver<WorkerInfoResponse>) out, granted);
        watchers.add(w);
        w.send(answer());
        boolean changes = fault == Fault.NEVER_PUSHES || fault == Fault.NO_REVISIONS_NO_HEARTBEATS
                || fault == Fault.REVISIONS_GO_BACK;
        if (changes && changeScheduled.compareAndSet(false, true)) {
            timer.schedule(() -> state(ServingState.NOT_SERVING), 300, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void releaseWorker(ReleaseWorkerRequest request, StreamObserver<ReleaseWorkerResponse> out) {
        if (fault != Fault.RELEASES_ANYTHING) {
            super.releaseWorker(request, out); // UNIMPLEMENTED
            return;
        }
        out.onNext(ReleaseWorkerResponse.getDefaultInstance());
        out.onCompleted();
    }

    /** One stream: sends are serialised; a heartbeat repeats the last answer at 80 % of the grant. */
    private final class Watcher {
        private final ServerCallStreamObserver<WorkerInfoResponse> out;
        private final int granted;
        private WorkerInfoResponse last;
        private ScheduledFuture<?> beat;

        Watcher(ServerCallStreamObserver<WorkerInfoResponse> out, int granted) {
            this.out = out;
            this.granted = granted;
            out.setOnCancelHandler(this::stop);
            if (granted > 0) {
                long every = fault == Fault.REPEATS_EVERY_50_MS ? 50 : granted * 8L / 10;
                beat = timer.scheduleAtFixedRate(() -> send(null), every, every, TimeUnit.MILLISECONDS);
            }
        }

        synchronized void send(WorkerInfoResponse answer) {
            if (out.isCancelled()) {
                return;
            }
            if (answer != null) {
                last = answer;
            }
            out.onNext(last.toBuilder().setHeartbeatMillis(granted).build());
        }

        synchronized void stop() {
            watchers.remove(this);
            if (beat != null) {
                beat.cancel(false);
            }
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
        timer.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
