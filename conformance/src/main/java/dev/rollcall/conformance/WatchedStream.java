package dev.rollcall.conformance;

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
import java.util.concurrent.atomic.AtomicLong;

/**
 * One {@code WatchWorkerInfo} call of a run, and what it has said so far. gRPC's threads only stamp
 * each answer or end with its arrival time and hand it to the run's queue, within this stream's
 * budget ({@link #MAX_QUEUED} answers in the queue, {@link #MAX_QUEUED_BYTES} of this stream's answers
 * not yet {@link #taken}); everything else ({@link #last}, counts, gaps) belongs to the thread that
 * runs the check.
 */
final class WatchedStream implements ClientResponseObserver<WorkerInfoRequest, WorkerInfoResponse> {

    /** An answer ({@code end == null}) or the end of a stream, with {@link System#nanoTime()} at arrival. */
    record Event(WatchedStream stream, WorkerInfoResponse answer, Status end, long atNanos) {
    }

    /** Answers waiting to be looked at, at most: a worker that floods its stream is cut off, not buffered. */
    static final int MAX_QUEUED = 10_000;

    /**
     * Bytes of one stream's answers waiting to be looked at, at most (its budget), as they were on the
     * wire: answers may be 1 MiB each, so the count alone would let a worker make the kit hold gigabytes.
     */
    static final long MAX_QUEUED_BYTES = 16L << 20;

    final String name;
    final int askedHeartbeatMillis;
    final long openedAt;
    private final BlockingQueue<Event> events;
    private volatile ClientCallStreamObserver<WorkerInfoRequest> call;
    private final AtomicLong queuedBytes = new AtomicLong();
    /** Null until the stream was cut off for going over its budget; then which bound it went over. */
    private volatile String overflow;

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

    /** Opens the stream on {@code channel}, asking for {@code heartbeatMillis} (0: none), ending by {@code deadline}; {@code events} is unbounded, answers are kept within the budget. */
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

    /** Whether an answer came over the budget: the stream was cancelled then. */
    boolean overflowed() {
        return overflow != null;
    }

    /** W6's word on a stream cut off for going over its budget. */
    String overflowFinding() {
        return "the " + name + " stream sent " + overflow + " faster than they were read, and was cut off: a queue,"
                + " not the newest answer";
    }

    /**
     * Whether {@code e} ends this stream because the kit cut it off (over its budget); such an end is
     * recorded here, so that it is never judged as the worker's. Run thread only.
     */
    boolean endedByKit(Event e) {
        if (e.answer() != null || overflow == null || ended()) {
            return false;
        }
        end = e.end();
        endAt = e.atNanos();
        return true;
    }

    /** The run's thread took {@code e} from the queue: its bytes leave the budget. */
    void taken(Event e) {
        if (e.answer() != null) {
            queuedBytes.addAndGet(-e.answer().getSerializedSize());
        }
    }

    void cancel() {
        cancel("the conformance check is done");
    }

    private void cancel(String why) {
        ClientCallStreamObserver<WorkerInfoRequest> c = call;
        if (c != null) {
            c.cancel(why, null);
        }
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<WorkerInfoRequest> requestStream) {
        this.call = requestStream;
    }

    @Override
    public void onNext(WorkerInfoResponse answer) {
        if (overflow != null) {
            return; // cut off already: what was in flight is dropped
        }
        long size = answer.getSerializedSize(); // memoized: the run's thread asks again for free
        if (events.size() >= MAX_QUEUED) {
            overflow = "more than " + MAX_QUEUED + " answers";
        } else if (queuedBytes.addAndGet(size) > MAX_QUEUED_BYTES) {
            queuedBytes.addAndGet(-size);
            overflow = "more than " + (MAX_QUEUED_BYTES >> 20) + " MiB of answers (the kit's budget per stream)";
        } else {
            events.add(new Event(this, answer, null, System.nanoTime()));
            return;
        }
        cancel("over the conformance kit's budget: " + overflow);
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
