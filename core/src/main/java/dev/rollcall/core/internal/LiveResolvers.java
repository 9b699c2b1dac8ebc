package dev.rollcall.core.internal;

import dev.rollcall.api.Settings;
import dev.rollcall.api.registry.FleetSnapshot;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The resolvers of this process that {@code rollcall:} gRPC targets may name, by the target's
 * authority. Internal: the bridge between {@code WorkerResolver} and {@code dev.rollcall.grpc},
 * not part of Rollcall's public API. Thread-safe.
 */
public final class LiveResolvers {

    private static final Map<String, Handle> BY_ID = new ConcurrentHashMap<>();

    private LiveResolvers() {
    }

    /** What the gRPC integration needs of a resolver. Thread-safe. */
    public interface Handle {

        /** The id a {@code rollcall://<id>/} target names. */
        String id();

        /** The current snapshot. */
        FleetSnapshot current();

        /**
         * Calls {@code listener} with the current snapshot and every later one, and {@code closed}
         * once when the resolver closes; close the result to stop.
         */
        AutoCloseable listen(Consumer<FleetSnapshot> listener, Runnable closed);

        /** Whether the resolver is closed: its snapshots are final and nothing is verified any more. */
        boolean closed();

        /**
         * Probes the worker at {@code url} with a probe that starts now; completes with whether the
         * process answering it is the instance the current snapshot lists as compatible. The gate
         * asks it when a connection of its own reached another instance: the resolver may not know
         * yet that the worker restarted.
         */
        CompletableFuture<Boolean> verify(String url);

        /** The deadline of each probe ({@code rollcall.probe.timeout}): also of the gate's checks. */
        Duration probeTimeout();

        /** The largest {@code WorkerInfo} answer taken ({@code rollcall.probe.max-response-bytes}). */
        int maxAnswerBytes();

        /**
         * The resolver's configuration (what its builder was given on top): the {@code rollcall:}
         * channels read their own keys ({@code rollcall.calls.*}) from it, so that one file configures
         * a resolver and its targets.
         */
        Settings settings();

        /** A user's call to the worker at {@code url} failed as if it were gone. */
        void callFailed(String url, String why);

        /** Why no worker is usable in {@code snapshot}: counts, discovery, the first exclusions. */
        String whyNone(FleetSnapshot snapshot);
    }

    /** Makes {@code handle} reachable by its id until {@link #remove}. */
    public static void add(Handle handle) {
        BY_ID.put(handle.id(), handle);
    }

    /** Makes {@code handle} unreachable. */
    public static void remove(Handle handle) {
        BY_ID.remove(handle.id(), handle);
    }

    /** The live resolver with {@code id}. */
    public static Optional<Handle> find(String id) {
        return Optional.ofNullable(BY_ID.get(id));
    }
}
