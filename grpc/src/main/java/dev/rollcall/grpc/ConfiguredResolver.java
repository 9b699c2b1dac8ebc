package dev.rollcall.grpc;

import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.internal.LiveResolvers;
import java.net.URI;

/**
 * The process-wide resolver behind {@code rollcall:///} targets: built from
 * {@code rollcall.properties} by the first channel that needs it, shared by all, closed (on a
 * thread of its own, so that no gRPC thread waits for it) when the last one shuts down.
 * Thread-safe.
 */
final class ConfiguredResolver {

    private static WorkerResolver resolver; // guarded by ConfiguredResolver.class
    private static LiveResolvers.Handle handle;
    private static int users;

    private ConfiguredResolver() {
    }

    /** The shared resolver's handle; builds it when none is running. Configuration errors propagate. */
    static synchronized LiveResolvers.Handle acquire() {
        if (resolver == null) {
            WorkerResolver built = WorkerResolver.fromConfig();
            String id = URI.create(built.grpcTarget()).getAuthority();
            resolver = built;
            handle = LiveResolvers.find(id).orElseThrow(() -> new IllegalStateException(
                    "resolver " + built.name() + " is not registered for rollcall: targets"));
        }
        users++;
        return handle;
    }

    /** One user fewer; the last one closes the resolver. */
    static synchronized void release() {
        if (users == 0) {
            return;
        }
        if (--users == 0) {
            WorkerResolver closing = resolver;
            resolver = null;
            handle = null;
            NamedThreads.daemonNamed("rollcall-close-" + closing.name()).newThread(closing::close).start();
        }
    }
}
