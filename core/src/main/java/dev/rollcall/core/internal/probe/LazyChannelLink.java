package dev.rollcall.core.internal.probe;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.probe.client.OpenSockets;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link ProbeTransport.Link} over one {@link ProbeClient} channel that is built on first use, at
 * most once, and never after the link is closed: what the links of {@link ProbeTransport#grpc} and
 * {@link ProtocolTransport} share (the connection's state, its backoff, a reconnect, and the close on
 * the link's event loop). Subclasses probe; the hooks say where they differ. Thread-safe: the
 * channel and the closed flag are guarded by this.
 */
abstract class LazyChannelLink implements ProbeTransport.Link {

    private final ProbeClient client;
    final WorkerEndpoint endpoint;
    /** Where the channel is built and calls start (see {@link ProbeClient#starter()}). */
    final Executor starter;
    /** The event loop thread of the channel's network I/O, its deadlines and its close ({@link ProbeClient#lane()}). */
    final Executor lane;
    /** The channel's HTTP/2 keepalive; null: no pings. */
    private final ProbeClient.Http2Keepalive keepalive;
    /** The sockets the channel has open, for a close that waits until they are gone. */
    private final OpenSockets sockets = new OpenSockets();
    private ManagedChannel channel; // guarded by this
    private boolean closed;         // guarded by this

    LazyChannelLink(ProbeClient client, WorkerEndpoint endpoint, ProbeClient.Http2Keepalive keepalive) {
        this.client = client;
        this.endpoint = endpoint;
        this.keepalive = keepalive;
        this.starter = client.starter();
        this.lane = client.lane();
    }

    /** Whether the link keeps a connection whose state means anything; else it is always ready and never watched. */
    boolean connects() {
        return true;
    }

    /** {@link #whenNotReady} registered its callback on a built channel: the connection is watched from now on. */
    void watched() {
    }

    /** The channel {@link #resetConnectBackoff} and {@link #reconnect} act on: by default built now if it is not yet. */
    ManagedChannel channelToReset() {
        return built();
    }

    /** The link was just marked closed, before its channel is shut down. */
    void closing() {
    }

    /** The channel, built now if it is not yet; null once closed. */
    final synchronized ManagedChannel built() {
        if (channel == null && !closed) {
            channel = client.open(endpoint, lane, keepalive, sockets);
        }
        return channel;
    }

    /** The channel if it was built, else null; never builds one. */
    final synchronized ManagedChannel existing() {
        return channel;
    }

    final synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public final boolean ready() {
        if (!connects()) {
            return true; // nothing to watch: only discovery tells of a restart
        }
        ManagedChannel c = built();
        return c != null && c.getState(false) == ConnectivityState.READY;
    }

    @Override
    public final void whenNotReady(Runnable then) {
        if (!connects()) {
            return; // never: the link keeps no connection whose loss would mean anything
        }
        ManagedChannel c = built();
        if (c == null) {
            then.run();
        } else {
            c.notifyWhenStateChanged(ConnectivityState.READY, then);
            watched();
        }
    }

    @Override
    public final void resetConnectBackoff() {
        ManagedChannel c = channelToReset();
        if (c != null) {
            c.resetConnectBackoff();
        }
    }

    @Override
    public final ManagedChannel channel() {
        return built();
    }

    @Override
    public final void reconnect() {
        ManagedChannel c = channelToReset();
        if (c != null) {
            c.enterIdle();
        }
    }

    @Override
    public final CompletableFuture<Void> close(boolean untilGone) {
        ManagedChannel c;
        synchronized (this) {
            closed = true;
            c = channel;
        }
        closing();
        if (c == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> gone = untilGone ? new CompletableFuture<>() : CompletableFuture.completedFuture(null);
        // On the event loop too: a shutdown is not free, and a churn closes
        // a channel per worker that left, on the caller's thread (the serial context).
        try {
            lane.execute(() -> {
                c.shutdownNow();
                if (untilGone) {
                    client.whenClosed(sockets, gone);
                }
            });
        } catch (RejectedExecutionException stopped) {
            c.shutdownNow();
            gone.complete(null);
        }
        return gone;
    }
}
