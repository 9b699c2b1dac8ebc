package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusOr;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Scenario 8's baseline: grpc's own static address list. grpc-java has no built-in scheme for
 * several fixed addresses, so this is the few lines a user writes: a {@link NameResolverProvider}
 * for {@code fixed:///host:port,host:port} that hands the channel those addresses once and never
 * changes them. Registered in the default registry by {@link #target(List)}. Thread-safe.
 */
final class FixedAddresses extends NameResolverProvider {

    static final String SCHEME = "fixed";
    private static final FixedAddresses INSTANCE = new FixedAddresses();
    private static volatile boolean registered;

    /** A {@code fixed:} target for a channel over exactly {@code workers}, registering the scheme first. */
    static synchronized String target(List<WorkerEndpoint> workers) {
        if (!registered) {
            NameResolverRegistry.getDefaultRegistry().register(INSTANCE);
            registered = true;
        }
        return SCHEME + ":///" + workers.stream().map(e -> e.host() + ":" + e.port()).collect(Collectors.joining(","));
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        List<EquivalentAddressGroup> groups = Arrays.stream(target.getPath().substring(1).split(","))
                .map(hostPort -> {
                    int colon = hostPort.lastIndexOf(':');
                    SocketAddress a = new InetSocketAddress(hostPort.substring(0, colon),
                            Integer.parseInt(hostPort.substring(colon + 1)));
                    return new EquivalentAddressGroup(a);
                }).toList();
        return new NameResolver() {
            @Override
            public String getServiceAuthority() {
                return "fixed-workers";
            }

            @Override
            public void start(Listener2 listener) {
                listener.onResult2(ResolutionResult.newBuilder()
                        .setAddressesOrError(StatusOr.fromValue(groups)).build());
            }

            @Override
            public void shutdown() {
                // nothing to stop: the list never changes
            }
        };
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
