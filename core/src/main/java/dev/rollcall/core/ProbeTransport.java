package dev.rollcall.core;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.ProbeClient;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * How {@link ProbeScheduler} reaches workers: one {@link Link} (a gRPC channel) per worker, over
 * which it probes and whose connection it watches. {@link #grpc} is the real thing; unit tests of
 * the scheduler hand in a fake. Thread-safe.
 */
interface ProbeTransport {

    /** A link to {@code endpoint}; it connects lazily, on the first probe. */
    Link open(WorkerEndpoint endpoint);

    /** A connection to one worker. Thread-safe; callbacks come on network threads. */
    interface Link {

        /** One {@code WorkerInfo} call with a deadline; never completes exceptionally. */
        CompletableFuture<ProbeOutcome> probe(Duration timeout);

        /** Whether the connection is up now. */
        boolean ready();

        /** Calls {@code then} once, when the connection leaves READY (at once when it is not READY now). */
        void whenNotReady(Runnable then);

        /**
         * Watches the worker's pushed answers ({@code WatchWorkerInfo}); see
         * {@link ProbeClient#watch}. Callbacks on network threads.
         */
        ProbeClient.Watch watch(java.util.function.Consumer<ProbeOutcome> onAnswer,
                                java.util.function.Consumer<io.grpc.Status> onEnd);

        /** Lets a new connection attempt start at once instead of after gRPC's own reconnect backoff. */
        void resetConnectBackoff();

        /** The channel, for other calls to the same worker (schema fetches). */
        ManagedChannel channel();

        /**
         * Drops the connection; the next call opens a new one over the same channel, which stays
         * usable (a channel handed to the user must not be closed under them).
         */
        void reconnect();

        /** Closes the connection at once; calls in flight fail. */
        void close();
    }

    /** Links over {@code client}'s channels. */
    static ProbeTransport grpc(ProbeClient client) {
        return endpoint -> {
            ManagedChannel channel = client.open(endpoint);
            return new Link() {
                @Override
                public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
                    return client.probe(channel, endpoint, timeout);
                }

                @Override
                public ProbeClient.Watch watch(java.util.function.Consumer<ProbeOutcome> onAnswer,
                                               java.util.function.Consumer<io.grpc.Status> onEnd) {
                    return client.watch(channel, endpoint, onAnswer, onEnd);
                }

                @Override
                public boolean ready() {
                    return channel.getState(false) == ConnectivityState.READY;
                }

                @Override
                public void whenNotReady(Runnable then) {
                    channel.notifyWhenStateChanged(ConnectivityState.READY, then);
                }

                @Override
                public void resetConnectBackoff() {
                    channel.resetConnectBackoff();
                }

                @Override
                public ManagedChannel channel() {
                    return channel;
                }

                @Override
                public void reconnect() {
                    channel.enterIdle();
                }

                @Override
                public void close() {
                    channel.shutdownNow();
                }
            };
        };
    }
}
