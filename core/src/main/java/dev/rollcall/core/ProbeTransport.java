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

    /**
     * Links over {@code client}'s channels. Building a channel and starting a call cost tens of
     * microseconds each; both run on the client's event loop, not on the caller's thread (the
     * resolver's serial context, which a profile of converging on 10,000 workers found spending a
     * third of its time there). A link's channel is built on first use and at most once.
     */
    static ProbeTransport grpc(ProbeClient client) {
        java.util.concurrent.Executor starter = client.starter();
        return endpoint -> new Link() {
            private ManagedChannel channel; // guarded by this
            private boolean closed;         // guarded by this

            /** The channel, built now if it is not yet; null once closed. */
            private synchronized ManagedChannel built() {
                if (channel == null && !closed) {
                    channel = client.open(endpoint);
                }
                return channel;
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
                CompletableFuture<ProbeOutcome> outcome = new CompletableFuture<>();
                try {
                    starter.execute(() -> {
                        ManagedChannel c = built();
                        if (c == null) {
                            outcome.complete(new ProbeOutcome.Failed(io.grpc.Status.Code.CANCELLED, "link closed"));
                            return;
                        }
                        client.probe(c, endpoint, timeout).whenComplete((o, failure) -> outcome.complete(o != null ? o
                                : new ProbeOutcome.Failed(io.grpc.Status.Code.INTERNAL, String.valueOf(failure))));
                    });
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    outcome.complete(new ProbeOutcome.Failed(io.grpc.Status.Code.CANCELLED, "probe client closed"));
                }
                return outcome;
            }

            @Override
            public ProbeClient.Watch watch(java.util.function.Consumer<ProbeOutcome> onAnswer,
                                           java.util.function.Consumer<io.grpc.Status> onEnd) {
                return client.watch(built(), endpoint, onAnswer, onEnd);
            }

            @Override
            public boolean ready() {
                ManagedChannel c = built();
                return c != null && c.getState(false) == ConnectivityState.READY;
            }

            @Override
            public void whenNotReady(Runnable then) {
                ManagedChannel c = built();
                if (c == null) {
                    then.run();
                } else {
                    c.notifyWhenStateChanged(ConnectivityState.READY, then);
                }
            }

            @Override
            public void resetConnectBackoff() {
                ManagedChannel c = built();
                if (c != null) {
                    c.resetConnectBackoff();
                }
            }

            @Override
            public ManagedChannel channel() {
                return built();
            }

            @Override
            public void reconnect() {
                ManagedChannel c = built();
                if (c != null) {
                    c.enterIdle();
                }
            }

            @Override
            public void close() {
                ManagedChannel c;
                synchronized (this) {
                    closed = true;
                    c = channel;
                }
                if (c != null) {
                    c.shutdownNow();
                }
            }
        };
    }
}
