package dev.rollcall.core.internal.probe.client;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The sockets one channel has open: each socket its transports make is counted when Netty creates
 * it and uncounted once it has closed and its descriptor is released, so that whoever shut the
 * channel down learns when its last socket is gone (gRPC has no callback for a channel's
 * termination; polling for it delays every close by the polling interval and costs a task per
 * closing socket each time). Thread-safe.
 */
public final class OpenSockets {

    private int open;                                           // guarded by this
    private List<CompletableFuture<Void>> waiting = List.of(); // guarded by this

    /** Netty's factory for the channel's sockets ({@code NettyChannelBuilder.channelFactory}), counting them here. */
    ChannelFactory<Channel> counting(ChannelFactory<? extends Channel> sockets) {
        return () -> {
            Channel socket = sockets.newChannel();
            synchronized (this) {
                open++;
            }
            socket.closeFuture().addListener(f -> afterDeregistration(socket));
            return socket;
        };
    }

    /**
     * Counts {@code socket} closed once its event loop has selected again: the JDK keeps the
     * descriptor of a closed socket that was registered with a selector (the connection itself is
     * shut) until that selector's next select, and the count promises descriptors. A task scheduled
     * from the loop runs after its next I/O pass; one that is merely queued would run before it.
     */
    private void afterDeregistration(Channel socket) {
        try {
            socket.eventLoop().schedule(this::closed, 0, TimeUnit.NANOSECONDS);
        } catch (RuntimeException notRegisteredOrStopped) {
            closed();
        }
    }

    private void closed() {
        List<CompletableFuture<Void>> done;
        synchronized (this) {
            if (--open > 0 || waiting.isEmpty()) {
                return;
            }
            done = waiting;
            waiting = List.of();
        }
        done.forEach(g -> g.complete(null));
    }

    /** Completes {@code gone} once no socket is open (at once when none is now), on the thread that closed the last. */
    public void whenNoneOpen(CompletableFuture<Void> gone) {
        synchronized (this) {
            if (open > 0) {
                if (waiting.isEmpty()) {
                    waiting = new ArrayList<>(1);
                }
                waiting.add(gone);
                return;
            }
        }
        gone.complete(null);
    }

    /** Sockets open now. */
    public synchronized int open() {
        return open;
    }
}
