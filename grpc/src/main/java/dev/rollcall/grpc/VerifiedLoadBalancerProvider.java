package dev.rollcall.grpc;

import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import io.grpc.NameResolver;
import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.List;
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
 *
 * <p>With an {@code "outlierDetection"} object in its config (gRFC A50's fields, which the target
 * writes from {@code rollcall.calls.outlier-detection.*}), the gate's child is grpc-java's
 * {@code outlier_detection_experimental} with the picking policy beneath it: gRPC counts each
 * verified worker's calls and ejects outliers from the picks.
 */
public final class VerifiedLoadBalancerProvider extends RollcallLoadBalancerProvider {

    /** The policy's name in service configs. */
    public static final String POLICY = "rollcall_verified";

    /**
     * The parsed config: the policy that picks ({@code round_robin}, ...), the policy the gate runs as
     * its child (that one, or gRPC's outlier detection with it beneath) and the child's parsed config.
     */
    record Config(String picking, String childPolicy, Object childConfig) {
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
        Object outliers = raw.get("outlierDetection");
        if (outliers == null) {
            NameResolver.ConfigOrError childConfig = provider.parseLoadBalancingPolicyConfig(Map.of());
            if (childConfig.getError() != null) {
                return childConfig;
            }
            return NameResolver.ConfigOrError.fromConfig(new Config(name, name, childConfig.getConfig()));
        }
        // gRPC's own outlier detection between the gate and the picking policy: its parser, its statistics.
        LoadBalancerProvider detection = LoadBalancerRegistry.getDefaultRegistry().getProvider(OutlierDetection.POLICY);
        if (detection == null || !(outliers instanceof Map<?, ?> json)) {
            return NameResolver.ConfigOrError.fromError(Status.INTERNAL.withDescription(POLICY + ": "
                    + (detection == null ? "grpc-util's " + OutlierDetection.POLICY + " is not registered"
                    : "outlierDetection is not an object")));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> config = new LinkedHashMap<>((Map<String, Object>) json);
        config.put("childPolicy", List.of(Map.of(name, Map.of())));
        NameResolver.ConfigOrError parsed = detection.parseLoadBalancingPolicyConfig(config);
        if (parsed.getError() != null) {
            return parsed;
        }
        return NameResolver.ConfigOrError.fromConfig(new Config(name, OutlierDetection.POLICY, parsed.getConfig()));
    }
}
