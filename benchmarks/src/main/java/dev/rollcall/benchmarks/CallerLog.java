package dev.rollcall.benchmarks;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One caller in a tight loop on a channel, as a coordinator's client: a unary {@code WorkerInfo} at a
 * time, each call's start ({@code nanoTime}) written down with the worker that answered (by the
 * answer's {@code instance_id}) so that scenario 15 can say from which call on no call landed on a
 * drained worker. The loop runs on a daemon thread of its own; the log is read and reset from others.
 */
final class CallerLog implements AutoCloseable {

    private static final WorkerInfoRequest REQUEST = WorkerInfoRequest.getDefaultInstance();

    private final List<String> instanceIds;
    private final AtomicLong failures = new AtomicLong();
    private Thread thread;
    private long[] starts = new long[4096];
    private int[] answeredBy = new int[4096];
    private int size;
    private volatile boolean stopped;

    /** A log that nothing writes yet; {@code instanceIds} are the workers' ids, a call's answerer is an index of it. */
    CallerLog(List<String> instanceIds) {
        this.instanceIds = List.copyOf(instanceIds);
    }

    /** A log of calls made from now on, one at a time, on {@code channel}. */
    static CallerLog calling(String name, ManagedChannel channel, List<String> instanceIds) {
        CallerLog log = new CallerLog(instanceIds);
        WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel).withWaitForReady();
        log.thread = new Thread(() -> log.loop(stub), "rollcall-bench-caller-" + name);
        log.thread.setDaemon(true);
        log.thread.start();
        return log;
    }

    private void loop(WorkerServiceGrpc.WorkerServiceBlockingStub stub) {
        while (!stopped) {
            long start = System.nanoTime();
            String answered;
            try {
                answered = stub.withDeadlineAfter(10, TimeUnit.SECONDS).workerInfo(REQUEST).getInstanceId();
            } catch (StatusRuntimeException e) {
                failures.incrementAndGet();
                continue;
            }
            add(start, instanceIds.indexOf(answered));
        }
    }

    /** Writes down a call that started at {@code start} and was answered by worker {@code worker}. */
    synchronized void add(long start, int worker) {
        if (size == starts.length) {
            starts = Arrays.copyOf(starts, size * 2);
            answeredBy = Arrays.copyOf(answeredBy, size * 2);
        }
        starts[size] = start;
        answeredBy[size++] = worker;
    }

    /** Forgets the calls so far. */
    synchronized void reset() {
        size = 0;
    }

    /** Whether a call since the last reset was answered by worker {@code worker}. */
    synchronized boolean answeredBy(int worker) {
        for (int i = 0; i < size; i++) {
            if (answeredBy[i] == worker) {
                return true;
            }
        }
        return false;
    }

    /**
     * When, after {@code t0}, calls stopped landing on {@code drained}: the start of the first call
     * that started after {@code t0} and after the last call {@code drained} answered, in nanoseconds
     * after {@code t0}, once at least {@code confirm} calls from that one on were answered by other
     * workers; -1 until then.
     */
    synchronized long outAfter(long t0, int drained, int confirm) {
        int firstAfter = -1;
        int lastDrained = -1;
        for (int i = 0; i < size; i++) { // one thread calls: starts ascend
            if (starts[i] >= t0) {
                firstAfter = firstAfter < 0 ? i : firstAfter;
                lastDrained = answeredBy[i] == drained ? i : lastDrained;
            }
        }
        int first = lastDrained >= 0 ? lastDrained + 1 : firstAfter;
        if (firstAfter < 0 || size - first < confirm) {
            return -1;
        }
        return starts[first] - t0;
    }

    /** Calls that failed so far (none is expected: a drained worker still answers). */
    long failures() {
        return failures.get();
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(15));
        }
    }
}
