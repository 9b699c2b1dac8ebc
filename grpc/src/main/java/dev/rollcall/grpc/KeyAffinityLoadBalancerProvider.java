package dev.rollcall.grpc;

import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.NameResolver;
import java.util.Map;

/**
 * The {@value #POLICY} load-balancing policy: a call with a routing key goes to the worker that
 * owns the key by rendezvous hashing over the channel's addresses — the same worker as
 * {@code snapshot.route(service, method, caller, key)} for the same workers, so the coordinators and
 * the channel agree. The key comes from the call option {@link #KEY} or else the header
 * {@link #KEY_HEADER}; calls without a key take turns over the connected workers. Choose it behind a
 * {@code rollcall:} target with {@code ?lb=rollcall_key_affinity}, where the
 * {@value VerifiedLoadBalancerProvider#POLICY} gate still verifies every connection.
 *
 * <p>While the owner's connection is coming up (or being verified by the gate), its calls wait; when
 * it cannot connect, or the gate refused its connection, they fail {@code UNAVAILABLE} naming it and
 * why (the resolver takes it out of the addresses once it knows, and its keys move to the others).
 * Calls without a key wait while any worker is coming up, and fail with the first worker's reason
 * when none can be reached.
 */
public final class KeyAffinityLoadBalancerProvider extends RollcallLoadBalancerProvider {

    /** The policy's name. */
    public static final String POLICY = "rollcall_key_affinity";

    /** The routing key of a call: {@code stub.withOption(KEY, "customer-42")}. */
    public static final CallOptions.Key<String> KEY = CallOptions.Key.create("rollcall.key");

    /** The routing key as a header, for calls whose options you do not set: {@code rollcall-key}. */
    public static final Metadata.Key<String> KEY_HEADER = Metadata.Key.of("rollcall-key", Metadata.ASCII_STRING_MARSHALLER);

    /** The provider grpc's registry loads through {@code META-INF/services}. */
    public KeyAffinityLoadBalancerProvider() {
        super(POLICY, KeyAffinityLoadBalancer::new);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> raw) {
        return NameResolver.ConfigOrError.fromConfig(Boolean.TRUE);
    }
}
