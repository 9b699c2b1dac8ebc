package dev.rollcall.core.grpc;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import io.grpc.NameResolver;
import io.grpc.Status;
import java.util.Map;

/**
 * The {@value #POLICY} load-balancing policy, which {@code rollcall:} targets choose for their
 * channels: grpc's own {@code round_robin} or {@code pick_first} (config
 * {@code {"childPolicy": "pick_first"}}) picks, and a call goes over a connection only after the
 * worker behind it was probed on or after the moment that connection came up and answered as the
 * instance the resolver's snapshot accepted. A worker that restarts in place on the same address
 * with another instance therefore gets no call until the resolver has verified the new one; calls
 * wait meanwhile (one probe, typically a millisecond on a LAN). Found by
 * {@link java.util.ServiceLoader} through {@code META-INF/services/io.grpc.LoadBalancerProvider};
 * useful only behind a {@code rollcall:} target, whose addresses it needs.
 */
public final class VerifiedLoadBalancerProvider extends LoadBalancerProvider {

    /** The policy's name in service configs. */
    public static final String POLICY = "rollcall_verified";

    /** The parsed config: the child policy's name and its own parsed config. */
    record Config(String childPolicy, Object childConfig) {
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int getPriority() {
        return 5;
    }

    @Override
    public String getPolicyName() {
        return POLICY;
    }

    @Override
    public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return new VerifiedLoadBalancer(helper);
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
