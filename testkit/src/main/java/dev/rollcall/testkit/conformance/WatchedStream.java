package dev.rollcall.testkit.conformance;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code WatchWorkerInfo} call of a run, and what it has said so far. gRPC's threads only stamp
 * each answer or end with its arrival time and hand it to the run's bounded queue; everything else
 * ({@link #last}, counts, gaps) belongs to the thread that runs the check.
 */
final class WatchedStream implements ClientResponseObserver<WorkerInfoRequest, WorkerInfoResponse> {

    /** An answer ({@code end == null}) or the end of a stream, with {@link System#nanoTime()} at arrival. */
    record Event(WatchedStream stream, WorkerInfoResponse answer, Status end, long atNanos) {
    }

    /** Answers waiting to be looked at, at most: a worker that floods its stream is cut off, not buffered. */
    static final int MAX_QUEUED = 10_000;

    final String name;
    final int askedHeartbeatMillis;
    final long openedAt;
    private final BlockingQueue<Event> events;
    private volatile ClientCallStreamObserver<WorkerInfoRequest> call;
    private volatile boolean overflowed;

    // Run thread only.
    WorkerInfoResponse last;
    long lastAt;
    int count;
    int changes;
    int repeats;
    int grantedMillis = -1;
    long longestGapNanos;
    Status end;
    long endAt;

    private WatchedStream(String name, int askedHeartbeatMillis, BlockingQueue<Event> events) {
        this.name = name;
        this.askedHeartbeatMillis = askedHeartbeatMillis;
        this.events = events;
        this.openedAt = System.nanoTime();
    }

    /** Opens the stream on {@code channel}, asking for {@code heartbeatMillis} (0: none), ending by {@code deadline}; {@code events} is unbounded, answers are kept to {@link #MAX_QUEUED}. */
    static WatchedStream open(Channel channel, String name, int heartbeatMillis, Duration deadline,
                              BlockingQueue<Event> events) {
        return open(channel, name, heartbeatMillis, "", deadline, events);
    }

    /** As {@link #open(Channel, String, int, Duration, BlockingQueue)}, a holder stream when {@code holderId} is not empty (W18). */
    static WatchedStream open(Channel channel, String name, int heartbeatMillis, String holderId, Duration deadline,
                              BlockingQueue<Event> events) {
        WatchedStream stream = new WatchedStream(name, heartbeatMillis, events);
        WorkerServiceGrpc.newStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .watchWorkerInfo(WorkerInfoRequest.newBuilder().setHeartbeatMillis(heartbeatMillis)
                        .setHolderId(holderId).build(), stream);
        return stream;
    }

    boolean answered() {
        return count > 0;
    }

    boolean ended() {
        return end != null;
    }

    /** Whether the run's queue was full when an answer came: the stream was cancelled then. */
    boolean overflowed() {
        return overflowed;
    }

    void cancel() {
        ClientCallStreamObserver<WorkerInfoRequest> c = call;
        if (c != null) {
            c.cancel("the conformance check is done", null);
        }
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<WorkerInfoRequest> requestStream) {
        this.call = requestStream;
    }

    @Override
    public void onNext(WorkerInfoResponse answer) {
        if (events.size() >= MAX_QUEUED) {
            overflowed = true;
            cancel();
            return;
        }
        events.add(new Event(this, answer, null, System.nanoTime()));
    }

    @Override
    public void onError(Throwable t) {
        // Always kept: at most one per stream.
        events.add(new Event(this, null, Status.fromThrowable(t), System.nanoTime()));
    }

    @Override
    public void onCompleted() {
        events.add(new Event(this, null, Status.OK, System.nanoTime()));
    }
}
