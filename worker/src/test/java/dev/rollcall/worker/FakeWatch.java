package dev.rollcall.worker;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * One coordinator's {@code WatchWorkerInfo} stream, driven straight through a
 * {@link WorkerInfoService}'s own call handler without a network: records what the worker sends
 * and on which thread, and can hold a send (a {@link Gate}) so that a test makes an interleaving
 * happen instead of hoping for it.
 */
final class FakeWatch extends ServerCall<WorkerInfoRequest, WorkerInfoResponse> {

    /** Holds the first send that matches, on whatever thread makes it, until {@link #release()}. */
    static final class Gate {
        private final Predicate<WorkerInfoResponse> match;
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile FakeWatch heldOn;
        private volatile Thread heldThread;
        private boolean taken; // guarded by this

        Gate(Predicate<WorkerInfoResponse> match) {
            this.match = match;
        }

        void pass(FakeWatch watch, WorkerInfoResponse answer) throws InterruptedException {
            synchronized (this) {
                if (taken || !match.test(answer)) {
                    return;
                }
                taken = true;
            }
            heldOn = watch;
            heldThread = Thread.currentThread();
            held.countDown();
            if (!released.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("gate never released");
            }
        }

        /** Waits until a send is held; returns the stream it was for. */
        FakeWatch awaitHeld() throws InterruptedException {
            if (!held.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("no send reached the gate within 10 s");
            }
            return heldOn;
        }

        Thread heldThread() {
            return heldThread;
        }

        void release() {
            released.countDown();
        }
    }

    final List<WorkerInfoResponse> sent = new CopyOnWriteArrayList<>();
    final List<String> senders = new CopyOnWriteArrayList<>();
    /** When each answer was sent, by the clock the watch was opened with. */
    final List<Long> sentAt = new CopyOnWriteArrayList<>();
    private volatile LongSupplier clock = System::nanoTime;
    private final InetSocketAddress remote;
    private volatile Gate gate;
    private volatile boolean cancelled;
    private volatile boolean ready = true;
    private volatile Status closed;
    private Listener<WorkerInfoRequest> listener;

    private FakeWatch(InetSocketAddress remote) {
        this.remote = remote;
    }

    /** Opens a watch on {@code service} from {@code remote}, asking for heartbeats every {@code heartbeatMillis}. */
    static FakeWatch open(WorkerInfoService service, InetSocketAddress remote, int heartbeatMillis) {
        return open(service, remote, heartbeatMillis, System::nanoTime);
    }

    /** As {@link #open(WorkerInfoService, InetSocketAddress, int)}, noting send times by {@code clock}. */
    @SuppressWarnings("unchecked")
    static FakeWatch open(WorkerInfoService service, InetSocketAddress remote, int heartbeatMillis, LongSupplier clock) {
        FakeWatch call = new FakeWatch(remote);
        call.clock = clock;
        ServerCallHandler<WorkerInfoRequest, WorkerInfoResponse> handler =
                (ServerCallHandler<WorkerInfoRequest, WorkerInfoResponse>) service.bindService()
                        .getMethod(WorkerServiceGrpc.getWatchWorkerInfoMethod().getFullMethodName())
                        .getServerCallHandler();
        call.listener = handler.startCall(call, new Metadata());
        call.listener.onMessage(WorkerInfoRequest.newBuilder().setHeartbeatMillis(heartbeatMillis).build());
        call.listener.onHalfClose();
        call.listener.onReady();
        return call;
    }

    static FakeWatch open(WorkerInfoService service) {
        return open(service, new InetSocketAddress("127.0.0.1", 40_000), 0);
    }

    void gate(Gate g) {
        this.gate = g;
    }

    /** The coordinator goes away. */
    void cancel() {
        cancelled = true;
        listener.onCancel();
    }

    /** Flow control: whether the coordinator takes more now; back to true tells the worker so. */
    void ready(boolean isReady) {
        ready = isReady;
        if (isReady) {
            listener.onReady();
        }
    }

    Status closed() {
        return closed;
    }

    WorkerInfoResponse last() {
        return sent.isEmpty() ? null : sent.get(sent.size() - 1);
    }

    @Override
    public void request(int numMessages) {
    }

    @Override
    public void sendHeaders(Metadata headers) {
    }

    @Override
    public void sendMessage(WorkerInfoResponse message) {
        Gate g = gate;
        if (g != null) {
            try {
                g.pass(this, message);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        senders.add(Thread.currentThread().getName());
        sentAt.add(clock.getAsLong());
        sent.add(message);
    }

    @Override
    public boolean isReady() {
        return ready && !cancelled;
    }

    @Override
    public void close(Status status, Metadata trailers) {
        closed = status;
        if (status.isOk()) {
            listener.onComplete();
        } else {
            listener.onCancel();
        }
    }

    @Override
    public boolean isCancelled() {
        return cancelled;
    }

    @Override
    public Attributes getAttributes() {
        return Attributes.newBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote).build();
    }

    @Override
    public MethodDescriptor<WorkerInfoRequest, WorkerInfoResponse> getMethodDescriptor() {
        return WorkerServiceGrpc.getWatchWorkerInfoMethod();
    }
}
