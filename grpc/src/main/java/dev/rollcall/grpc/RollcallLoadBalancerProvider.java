package dev.rollcall.grpc;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import java.util.Objects;
import java.util.function.Function;

/**
 * What Rollcall's load-balancing policies have in common as grpc providers: a fixed policy name,
 * always available, grpc's default priority, and a new balancer per channel from the helper. Each
 * policy keeps its own config parsing. Called by grpc's {@code LoadBalancerRegistry} and channels on
 * any thread; holds no state of its own.
 */
abstract class RollcallLoadBalancerProvider extends LoadBalancerProvider {

    private final String policyName;
    private final Function<LoadBalancer.Helper, LoadBalancer> balancers;

    RollcallLoadBalancerProvider(String policyName, Function<LoadBalancer.Helper, LoadBalancer> balancers) {
        this.policyName = Objects.requireNonNull(policyName, "policyName");
        this.balancers = Objects.requireNonNull(balancers, "balancers");
    }

    /** Nothing to load or probe: the policy needs only grpc-core and the {@code rollcall:} addresses. */
    @Override
    public final boolean isAvailable() {
        return true;
    }

    // grpc's own providers use 5; the names are Rollcall's alone, so no provider competes for them.
    @Override
    public final int getPriority() {
        return 5;
    }

    @Override
    public final String getPolicyName() {
        return policyName;
    }

    @Override
    public final LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return balancers.apply(helper);
    }
}
