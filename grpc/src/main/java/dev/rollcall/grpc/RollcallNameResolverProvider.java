package dev.rollcall.grpc;

import dev.rollcall.core.internal.LiveResolvers;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;

/**
 * The {@code rollcall:} scheme for grpc-java channels, found by {@link java.util.ServiceLoader}
 * through {@code META-INF/services/io.grpc.NameResolverProvider}: nothing to register.
 *
 * <ul>
 *   <li>{@code rollcall://<id>/} — the compatible workers of a live {@code WorkerResolver}; take the
 *       string from {@code resolver.grpcTarget()}.</li>
 *   <li>{@code rollcall://<id>/demo.v1.Orders} — only those offering that service
 *       ({@code resolver.grpcTarget("demo.v1.Orders")}).</li>
 *   <li>{@code rollcall:///} and {@code rollcall:///demo.v1.Orders} — a resolver built from
 *       {@code rollcall.properties} (and system properties, environment) for code that only has a
 *       string; shared by every channel of such targets and closed when the last one shuts down.</li>
 *   <li>{@code ?lb=pick_first} — the load-balancing policy behind the gate; default
 *       {@code round_robin}.</li>
 * </ul>
 *
 * <p>The channel's addresses are the compatible workers of each new snapshot. Calls go through
 * the {@value VerifiedLoadBalancerProvider#POLICY} policy, which the resolver chooses for the
 * channel in its service config: a call uses a connection only once the worker was probed after
 * that connection came up and answered as the instance the snapshot accepted. With no compatible
 * worker the channel gets {@code UNAVAILABLE} with the snapshot's counts, never an empty success.
 * An unknown id fails the channel's calls {@code UNAVAILABLE} naming it.
 */
public final class RollcallNameResolverProvider extends NameResolverProvider {

    /** The scheme. */
    public static final String SCHEME = "rollcall";

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        String id = target.getAuthority() == null ? "" : target.getAuthority();
        String path = target.getPath() == null ? "" : target.getPath();
        String service = path.startsWith("/") ? path.substring(1) : path;
        if (service.endsWith("/")) {
            service = service.substring(0, service.length() - 1);
        }
        String lb = "round_robin";
        if (target.getQuery() != null) {
            for (String pair : target.getQuery().split("&")) {
                if (pair.startsWith("lb=")) {
                    lb = pair.substring(3);
                } else if (!pair.isEmpty()) {
                    throw new IllegalArgumentException("rollcall target " + target + ": unknown parameter '" + pair
                            + "' (known: lb=round_robin|pick_first)");
                }
            }
        }
        if (io.grpc.LoadBalancerRegistry.getDefaultRegistry().getProvider(lb) == null) {
            throw new IllegalArgumentException("rollcall target " + target + ": no load-balancing policy '" + lb
                    + "' is registered (round_robin and pick_first always are)");
        }
        Source source = id.isEmpty() ? new Source.FromConfig() : new Source.Live(id);
        return new RollcallNameResolver(target.toString(), id.isEmpty() ? SCHEME : id, source,
                service.isEmpty() ? null : service, lb, args);
    }

    /** Where a name resolver gets its resolver from. */
    sealed interface Source {
        /** The handle, or empty when there is none (yet): the channel fails its calls UNAVAILABLE. */
        java.util.Optional<LiveResolvers.Handle> acquire();

        void release();

        String describe();

        /** A live resolver, by the id in the target. */
        record Live(String id) implements Source {
            @Override
            public java.util.Optional<LiveResolvers.Handle> acquire() {
                return LiveResolvers.find(id);
            }

            @Override
            public void release() {
            }

            @Override
            public String describe() {
                return "no live WorkerResolver has the id '" + id + "' (closed, or the target is from another process)";
            }
        }

        /** The process-wide resolver of {@code rollcall.properties}. */
        final class FromConfig implements Source {
            @Override
            public java.util.Optional<LiveResolvers.Handle> acquire() {
                return java.util.Optional.of(ConfiguredResolver.acquire());
            }

            @Override
            public void release() {
                ConfiguredResolver.release();
            }

            @Override
            public String describe() {
                return "the resolver of rollcall.properties";
            }
        }
    }
}
