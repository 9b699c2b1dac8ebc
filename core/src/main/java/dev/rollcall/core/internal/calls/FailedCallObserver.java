package dev.rollcall.core.internal.calls;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * {@code WorkerResolver.callObserver()}: reports each call that closes {@code UNAVAILABLE} or
 * {@code DEADLINE_EXCEEDED} to the resolver ({@link CallPath#reportFailure} says what each means), naming the worker by the call's remote address, or, when the call never got a
 * connection, by the channel's authority ({@code host:port} for a channel to one worker). Calls
 * whose worker is not in the current snapshot are not reported. Thread-safe, stateless.
 */
final class FailedCallObserver implements ClientInterceptor {

    private final Supplier<FleetSnapshot> snapshot;
    private final BiConsumer<WorkerEndpoint, Status> report;

    FailedCallObserver(Supplier<FleetSnapshot> snapshot, BiConsumer<WorkerEndpoint, Status> report) {
        this.snapshot = snapshot;
        this.report = report;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        String authority = next.authority();
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                ClientCall<Q, R> call = this;
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        if (CallPath.reported(status.getCode())) {
                            SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                            worker(remote, authority).ifPresent(w -> report.accept(w, status));
                        }
                        super.onClose(status, trailers);
                    }
                }, headers);
            }
        };
    }

    /** The worker of the current snapshot at {@code remote}, or else at {@code authority}. */
    private Optional<WorkerEndpoint> worker(SocketAddress remote, String authority) {
        FleetSnapshot s = snapshot.get();
        for (WorkerInfo w : s.workers()) {
            WorkerEndpoint e = w.endpoint();
            if (remote instanceof InetSocketAddress a && a.getPort() == e.port()
                    && (e.host().equals(a.getHostString())
                    || a.getAddress() != null && e.host().equals(a.getAddress().getHostAddress()))) {
                return Optional.of(e);
            }
            if (remote == null && authority != null && authority.equals(e.host() + ":" + e.port())) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }
}
