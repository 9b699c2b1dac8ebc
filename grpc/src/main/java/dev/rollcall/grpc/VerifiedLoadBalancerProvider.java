package dev.rollcall.grpc;

import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import io.grpc.NameResolver;
import io.grpc.Status;
import java.util.Map;

/**
 * The {@value #POLICY} load-balancing policy, which {@code rollcall:} targets choose for their
 * channels: grpc's own {@code round_robin} or {@code pick_first} (config
 * {@code {"childPolicy": "pick_first"}}), or {@code rollcall_key_affinity}, picks, and a call goes
 * over a connection only after that very connection was asked {@code WorkerInfo} (with
 * {@code rollcall.probe.timeout} as deadline and {@code rollcall.probe.max-response-bytes} as bound)
 * and answered as the instance, with the version, that the resolver's current snapshot accepted for
 * the worker. The connection is asked again on every reconnect, and its answer held against every
 * new snapshot. So neither a worker that restarts in place with another instance nor a successor
 * that new connections to the same address reach (an {@code SO_REUSEPORT} hot restart, a layer-4
 * balancer, a NAT) gets a call while the resolver's own connection still reaches the old process.
 * Calls wait meanwhile (one round trip on the new connection, typically a millisecond on a LAN);
 * a connection that reached a process the snapshot does not accept is TRANSIENT_FAILURE with the
 * reason, which calls without wait-for-ready fail with when no other worker is ready. Found by
 * {@link java.util.ServiceLoader} through {@code META-INF/services/io.grpc.LoadBalancerProvider};
 * useful only behind a {@code rollcall:} target, whose addresses it needs.
 */
public final class VerifiedLoadBalancerProvider extends RollcallLoadBalancerProvider {

    /** The policy's name in service configs. */
    public static final String POLICY = "rollcall_verified";

    /** The parsed config: the child policy's name and its own parsed config. */
    record Config(String childPolicy, Object childConfig) {
    }

    /** The provider grpc's registry loads through {@code META-INF/services}. */
    public VerifiedLoadBalancerProvider() {
        super(POLICY, VerifiedLoadBalancer::new);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> raw) {
        Object child = raw.get("childPolicy");
        String name = child == null ? "round_robin" : String.valueOf(child);
        LoadBalancerProvider provider = LoadBalancerRegistry.getDefaultRegistry().getProvider(name);
        if (provider == null) {
            return NameResolver.ConfigOrError.fromError(Status.INTERNAL.withDescription(
                    POLICY + ": no load-balancing policy '" + name + "' is registered (childPolicy)"));
        }
        NameResolver.ConfigOrError childConfig = provider.parseLoadBalancingPolicyConfig(Map.of());
        if (childConfig.getError() != null) {
            return childConfig;
        }
        return NameResolver.ConfigOrError.fromConfig(new Config(name, childConfig.getConfig()));
    }
}
