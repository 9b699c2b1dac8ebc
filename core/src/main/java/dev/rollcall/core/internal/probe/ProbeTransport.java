package dev.rollcall.core.internal.probe;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * How {@link ProbeScheduler} reaches workers: one {@link Link} (a gRPC channel) per worker, over
 * which it probes and whose connection it watches. {@link #grpc} is the real thing; unit tests of
 * the scheduler hand in a fake. Thread-safe.
 */
public interface ProbeTransport {

    /** A link to {@code endpoint}; it connects lazily, on the first probe. */
    Link open(WorkerEndpoint endpoint);

    /** Whether a probe sends anything to the worker (counted in {@code probes.sent}); {@code none}'s do not. */
    default boolean sends() {
        return true;
    }

    /** Whether the worker pushes changes over a stream that the first probe opens ({@code probeAndWatch}). */
    default boolean pushes() {
        return true;
    }

    /** Whether answers carry discovery's labels (the version among them): a relabelled worker is probed again. */
    default boolean followsLabels() {
        return false;
    }

    /** A connection to one worker. Thread-safe; callbacks come on network threads. */
    interface Link {

        /** One {@code WorkerInfo} call with a deadline; never completes exceptionally. */
        CompletableFuture<ProbeOutcome> probe(Duration timeout);

        /** As {@link #probe(Duration)}, for the worker as discovery lists it now (a protocol may read its labels). */
        default CompletableFuture<ProbeOutcome> probe(WorkerEndpoint current, Duration timeout) {
            return probe(timeout);
        }

        /** As {@link #probeAndWatch(Duration, Duration, ProbeClient.StreamListener)}, for the worker as discovery lists it now. */
        default ProbeClient.Watched probeAndWatch(WorkerEndpoint current, Duration timeout, Duration heartbeat,
                                                  ProbeClient.StreamListener listener) {
            return probeAndWatch(timeout, heartbeat, listener);
        }

        /**
         * Probes by opening the worker's {@code WatchWorkerInfo} stream, asking for a repeat of its
         * answer after {@code heartbeat} without news (see {@link ProbeClient#watchFirst}):
         * {@code first} completes with the first answer or the failure (never exceptionally); the
         * stream, which the returned handle cancels at any time and which says what the worker
         * granted ({@link ProbeClient.Watch#heartbeatMillis()}), then goes on with {@code listener}
         * on network threads.
         */
        ProbeClient.Watched probeAndWatch(Duration timeout, Duration heartbeat, ProbeClient.StreamListener listener);

        /** Whether the connection is up now. */
        boolean ready();

        /** Calls {@code then} once, when the connection leaves READY (at once when it is not READY now). */
        void whenNotReady(Runnable then);

        /** Lets a new connection attempt start at once instead of after gRPC's own reconnect backoff. */
        void resetConnectBackoff();

        /** The channel, for other calls to the same worker (schema fetches). */
        ManagedChannel channel();

        /**
         * Drops the connection; the next call opens a new one over the same channel, which stays
         * usable (a channel handed to the user must not be closed under them).
         */
        void reconnect();

        /**
         * Closes the connection (at once, or right after on a network thread); calls in flight fail.
         * With {@code untilGone} the future completes once its socket is gone (at once when it never
         * connected), so that the caller can count a closing connection against the probe
         * concurrency; without, at once (nobody waits, and watching for the end costs a look every
         * millisecond). Never exceptionally.
         */
        CompletableFuture<Void> close(boolean untilGone);
    }

    /**
     * Links over {@code client}'s channels. Building a channel and starting a call are not free;
     * both run on the client's starter thread ({@link ProbeClient#starter()}), neither on the
     * caller's thread (the resolver's serial context, which every probe and build waits for while
     * converging) nor on the event loop that does the channel's network I/O ({@link ProbeClient#lane()}, where its deadline and its close run).
     * A link's channel is built on first use and at most once, with {@code keepalive} (null: none).
     */
    static ProbeTransport grpc(ProbeClient client, ProbeClient.Http2Keepalive keepalive) {
        return endpoint -> new LazyChannelLink(client, endpoint, keepalive) {
            /**
             * Runs {@code call} on the link's channel on the client's starter thread and completes
             * {@code outcome} with its result; a closed link or client completes it as {@code CANCELLED}.
             */
            private void onStarter(CompletableFuture<ProbeOutcome> outcome,
                                   Function<ManagedChannel, CompletableFuture<ProbeOutcome>> call) {
                try {
                    starter.execute(() -> {
                        ManagedChannel c = built();
                        if (c == null) {
                            outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "link closed"));
                            return;
                        }
                        CompletableFuture<ProbeOutcome> result;
                        try {
                            result = call.apply(c);
                        } catch (RejectedExecutionException e) {
                            outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
                            return;
                        }
                        result.whenComplete((o, failure) -> outcome.complete(o != null ? o
                                : new ProbeOutcome.Failed(Status.Code.INTERNAL, String.valueOf(failure))));
                    });
                } catch (RejectedExecutionException e) {
                    outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
                }
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
                CompletableFuture<ProbeOutcome> outcome = new CompletableFuture<>();
                onStarter(outcome, c -> client.probe(c, endpoint, timeout));
                return outcome;
            }

            @Override
            public ProbeClient.Watched probeAndWatch(Duration timeout, Duration heartbeat,
                                                     ProbeClient.StreamListener listener) {
                CompletableFuture<ProbeOutcome> first = new CompletableFuture<>();
                AtomicReference<ProbeClient.Watch> started =
                        new AtomicReference<>();
                AtomicBoolean cancelled = new AtomicBoolean();
                ProbeClient.Watch handle = new ProbeClient.Watch() {
                    @Override
                    public void cancel() {
                        cancelled.set(true);
                        ProbeClient.Watch w = started.get();
                        if (w != null) {
                            w.cancel();
                        }
                    }

                    @Override
                    public long heartbeatMillis() {
                        ProbeClient.Watch w = started.get();
                        return w == null ? 0 : w.heartbeatMillis();
                    }
                };
                onStarter(first, c -> {
                    ProbeClient.Watched w = client.watchFirst(c, lane, endpoint, timeout, heartbeat, listener);
                    started.set(w.stream());
                    if (cancelled.get()) {
                        w.stream().cancel(); // cancelled before the call had started
                    }
                    return w.first();
                });
                return new ProbeClient.Watched(first, handle);
            }
        };
    }
}
