package dev.rollcall.grpc;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.LiveResolvers;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

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
 *   <li>{@code ?require=udf:geo_distance,plan-protocol%3E%3D3} — only the workers that meet these
 *       requirements ({@link Requirements#parse}), percent-encoded as a URI's query must be
 *       ({@code <}, {@code >}, {@code ^} and spaces are not allowed in one as they are):
 *       {@link #requiring(String, Requirements)} writes it. Repeatable; they add up, and they add to
 *       each call's own ({@link RollcallCallOptions#REQUIREMENTS}).</li>
 * </ul>
 *
 * <p>The channel's addresses are the compatible workers of each new snapshot. Calls go through
 * the {@value VerifiedLoadBalancerProvider#POLICY} policy, which the resolver chooses for the
 * channel in its service config: a call uses a connection only once the worker was probed after
 * that connection came up and answered as the instance the snapshot accepted. With no compatible
 * worker the channel gets {@code UNAVAILABLE} with the snapshot's counts, never an empty success.
 * An unknown id fails the channel's calls {@code UNAVAILABLE} naming it.
 *
 * <p>Between the gate and the picking policy sits gRPC's own outlier detection (gRFC A50) when
 * {@code rollcall.calls.outlier-detection.enabled} (the default; {@link CallKeys}), configured from the
 * resolver's configuration; a malformed or out-of-bounds value fails
 * {@code ManagedChannelBuilder.build()} with a {@link dev.rollcall.api.ConfigurationException}
 * naming the key and the value.
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
        Requirements required = Requirements.none();
        if (target.getQuery() != null) {
            for (String pair : target.getQuery().split("&")) {
                if (pair.startsWith("lb=")) {
                    lb = pair.substring(3);
                } else if (pair.startsWith("require=")) {
                    required = required.and(requirements(target, pair.substring("require=".length())));
                } else if (!pair.isEmpty()) {
                    throw new IllegalArgumentException("rollcall target " + shown(target) + ": unknown parameter '"
                            + PeerText.escape(pair, 256) + "' (known: lb=round_robin|pick_first, require=REQUIREMENTS)");
                }
            }
        }
        if (io.grpc.LoadBalancerRegistry.getDefaultRegistry().getProvider(lb) == null) {
            throw new IllegalArgumentException("rollcall target " + shown(target) + ": no load-balancing policy '" + lb
                    + "' is registered (round_robin and pick_first always are)");
        }
        Source source = id.isEmpty() ? new Source.FromConfig() : new Source.Live(id);
        return new RollcallNameResolver(target.toString(), id.isEmpty() ? SCHEME : id, source,
                service.isEmpty() ? null : service, required, lb, OutlierDetection.read(source.settings()), args);
    }

    /**
     * {@code target} with {@code ?require=} (or {@code &require=}) added for {@code requirements},
     * percent-encoded: {@code requiring(resolver.grpcTarget(), Requirements.of("plan-protocol>=3"))}
     * is {@code rollcall://<id>/?require=plan-protocol%3E%3D3}. Unchanged for none.
     */
    public static String requiring(String target, Requirements requirements) {
        if (requirements.isEmpty()) {
            return target;
        }
        List<String> each = new ArrayList<>();
        requirements.asList().forEach(r -> each.add(URLEncoder.encode(r.toString(), StandardCharsets.UTF_8)
                .replace("+", "%20").replace("%3A", ":").replace("%2F", "/")));
        return target + (target.contains("?") ? "&" : "?") + "require=" + String.join(",", each);
    }

    private static Requirements requirements(URI target, String text) {
        try {
            return Requirements.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rollcall target " + shown(target) + ": require='"
                    + PeerText.escape(text, 256) + "': " + e.getMessage(), e);
        }
    }

    private static String shown(URI target) {
        return PeerText.escape(target.toString(), 512);
    }

    /** Where a name resolver gets its resolver from. */
    sealed interface Source {
        /** The handle, or empty when there is none (yet): the channel fails its calls UNAVAILABLE. */
        java.util.Optional<LiveResolvers.Handle> acquire();

        void release();

        String describe();

        /**
         * The configuration the channel reads its {@code rollcall.calls.*} keys from: the resolver's
         * own (defaults when it is gone: the channel fails its calls anyway).
         */
        Settings settings();

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
            public Settings settings() {
                return LiveResolvers.find(id).map(LiveResolvers.Handle::settings).orElse(Settings.of(Map.of()));
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
            public Settings settings() {
                // The chain ConfiguredResolver builds its resolver from.
                return RollcallConfig.load().settings();
            }

            @Override
            public String describe() {
                return "the resolver of rollcall.properties";
            }
        }
    }
}
