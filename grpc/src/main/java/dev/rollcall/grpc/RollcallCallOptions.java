package dev.rollcall.grpc;

import dev.rollcall.api.Requirements;
import io.grpc.CallOptions;

/**
 * Per-call options of a {@code rollcall:} channel, set as grpc-java's own are:
 * {@code stub.withOption(RollcallCallOptions.REQUIREMENTS, Requirements.of("udf:geo_distance"))}.
 *
 * <p>{@link #REQUIREMENTS}: the call goes only to a worker that meets them, judged on the
 * resolver's current snapshot, the one the {@value VerifiedLoadBalancerProvider#POLICY} gate
 * verifies connections against (so a capability a worker dropped, pushed in a new snapshot, keeps
 * the next call off it). The channel's child policy picks as usual when its choice meets them;
 * otherwise the call takes turns over the ready workers that do ({@code rollcall_key_affinity}: the
 * key's rendezvous owner among them). When no ready worker meets them the call waits while one is
 * connecting; else it fails {@code UNAVAILABLE} naming the requirements and how many compatible
 * workers lack them (a wait-for-ready call waits for one instead, as for any unavailable pick).
 * Under {@code pick_first}, which connects one worker, a call whose requirements that worker lacks
 * fails the same way: use {@code round_robin} (the default) or {@code rollcall_key_affinity}.
 * A target's {@code ?require=} applies to every call of the channel on top of these.
 */
public final class RollcallCallOptions {

    /** What the call needs of the worker it runs on; {@code null} (the default) or none: any worker. */
    public static final CallOptions.Key<Requirements> REQUIREMENTS = CallOptions.Key.create("rollcall.requirements");

    private RollcallCallOptions() {
    }
}
