package dev.rollcall.core.internal.calls;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The channel a resolver probes a worker over, as handed to the user by
 * {@code WorkerResolver.channel}: everything but shutting it down, which stays the resolver's
 * business (it closes the channel when the worker leaves discovery or the resolver closes).
 * The channel itself takes messages of any size, as Flight's own client does; the resolver's probe
 * and watch calls bound their answers per call ({@code rollcall.probe.max-response-bytes}). The
 * user's calls take their callbacks, and parse their messages, on the resolver's
 * {@link UserCallExecutor} (as an ordinary channel's run on its default executor), not on the probe
 * event loop that the resolver's own calls answer on: the connection's I/O is shared, the work on
 * each message is not.
 * Thread-safe, like the channel.
 */
final class SharedChannel extends ManagedChannel {

    private final ManagedChannel channel;
    private final String owner;
    private final Executor calls;

    SharedChannel(ManagedChannel channel, String owner, Executor calls) {
        this.channel = channel;
        this.owner = owner;
        this.calls = calls;
    }

    /** A call whose callbacks (and message parsing) run on {@code calls} unless it names an executor of its own. */
    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return channel.newCall(method, options.getExecutor() == null ? options.withExecutor(calls) : options);
    }

    @Override
    public String authority() {
        return channel.authority();
    }

    @Override
    public ManagedChannel shutdown() {
        throw new UnsupportedOperationException(refusal());
    }

    @Override
    public ManagedChannel shutdownNow() {
        throw new UnsupportedOperationException(refusal());
    }

    private String refusal() {
        return "this channel to " + channel.authority() + " belongs to resolver " + owner
                + ": it closes it when the worker leaves or the resolver closes";
    }

    @Override
    public boolean isShutdown() {
        return channel.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return channel.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return channel.awaitTermination(timeout, unit);
    }

    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return channel.getState(requestConnection);
    }

    @Override
    public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
        channel.notifyWhenStateChanged(source, callback);
    }

    @Override
    public void resetConnectBackoff() {
        channel.resetConnectBackoff();
    }

    @Override
    public String toString() {
        return "SharedChannel[" + channel.authority() + " of resolver " + owner + "]";
    }
}
