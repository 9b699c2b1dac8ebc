package dev.rollcall.grpc;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.core.internal.LiveResolvers;
import io.grpc.ConnectivityState;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gate's picker around its child's: a call with requirements ({@link RollcallCallOptions#REQUIREMENTS},
 * and the target's {@code ?require=}) goes only to a worker that meets them in the resolver's
 * current snapshot. The child's pick stands when its worker meets them; otherwise the call takes
 * turns over the ready workers that do (with a routing key under {@code rollcall_key_affinity}: the
 * key's rendezvous owner among those that meet them). A call without requirements is the child's
 * alone, at no cost.
 *
 * <p>Which subchannels meet which requirements is worked out once per (snapshot, requirements) and
 * kept, at most {@value #MAX_CACHED} requirement sets per picker, so that a pick is a map lookup.
 * Immutable but for that cache; picks come on any thread.
 */
final class RequirementsPicker extends SubchannelPicker {

    /** Distinct requirement sets kept per picker; past it the cache starts over (a channel rarely has many). */
    static final int MAX_CACHED = 64;

    /** A subchannel of the gate as its child last saw it. */
    record Member(Subchannel subchannel, String url, ConnectivityState state, Status failure) {
    }

    /** Which members meet one set of requirements in one snapshot. */
    private record Choice(FleetSnapshot snapshot, Set<Subchannel> meeting, List<Member> ready,
                          List<Member> meetingMembers, Status none) {
    }

    private final SubchannelPicker child;
    /** The child's overall state: while it is not READY the channel is still coming up. */
    private final ConnectivityState childState;
    private final List<Member> members;
    private final LiveResolvers.Handle fleet;
    private final Requirements channel;
    private final boolean keyed;
    private final String target;
    private final Map<Requirements, Choice> choices = new ConcurrentHashMap<>();
    private final AtomicInteger turn = new AtomicInteger();

    RequirementsPicker(SubchannelPicker child, ConnectivityState childState, List<Member> members,
                       LiveResolvers.Handle fleet, Requirements channel, boolean keyed, String target) {
        this.child = child;
        this.childState = childState;
        this.members = members;
        this.fleet = fleet;
        this.channel = channel;
        this.keyed = keyed;
        this.target = target;
    }

    @Override
    public PickResult pickSubchannel(PickSubchannelArgs args) {
        Requirements call = args.getCallOptions().getOption(RollcallCallOptions.REQUIREMENTS);
        if (call == null) {
            call = Requirements.none();
        }
        if (call.isEmpty() && channel.isEmpty()) {
            return child.pickSubchannel(args);
        }
        Choice choice;
        try {
            choice = choice(call);
        } catch (IllegalArgumentException tooMany) {
            return PickResult.withError(Status.INVALID_ARGUMENT.withDescription(target + ": "
                    + tooMany.getMessage()));
        }
        PickResult chosen = child.pickSubchannel(args);
        if (chosen.getSubchannel() != null && choice.meeting.contains(chosen.getSubchannel())) {
            return chosen;
        }
        if (choice.none != null) {
            return PickResult.withError(choice.none);
        }
        String key = keyed ? key(args) : null;
        if (key != null) {
            return owner(key, choice);
        }
        if (!choice.ready.isEmpty()) {
            return PickResult.withSubchannel(
                    choice.ready.get(Math.floorMod(turn.getAndIncrement(), choice.ready.size())).subchannel);
        }
        return waitOrFail(choice, call);
    }

    /** The key's rendezvous owner among the members that meet the requirements, as key affinity picks. */
    private PickResult owner(String key, Choice choice) {
        Member owner = null;
        long best = 0;
        for (Member m : choice.meetingMembers) {
            long w = KeyRouting.weight(key, m.url);
            if (owner == null || Long.compareUnsigned(w, best) > 0) {
                owner = m;
                best = w;
            }
        }
        if (owner.state == ConnectivityState.READY) {
            return PickResult.withSubchannel(owner.subchannel);
        }
        if (owner.state == ConnectivityState.TRANSIENT_FAILURE) {
            return PickResult.withError(Status.UNAVAILABLE.withDescription(target + ": the owner of key '"
                    + PeerText.escape(key, 128) + "' among the workers that meet the requirements, " + owner.url
                    + ", cannot be reached (" + owner.failure.getCode() + ": " + owner.failure.getDescription() + ")"));
        }
        return PickResult.withNoResult();
    }

    /**
     * Workers meet them but none is ready: wait while one is connecting (or idle while the channel
     * is still coming up); else fail, with the first one's reason when they all failed. An idle one
     * of a channel that is up is not waited for: its child policy chose not to connect it
     * ({@code pick_first} keeps one connection), and nothing here would.
     */
    private PickResult waitOrFail(Choice choice, Requirements call) {
        if (choice.meetingMembers.isEmpty()) {
            return PickResult.withNoResult(); // coming up (see choose): the next picker has the subchannels
        }
        Member failed = null;
        for (Member m : choice.meetingMembers) {
            if (m.state == ConnectivityState.CONNECTING
                    || (m.state == ConnectivityState.IDLE && childState != ConnectivityState.READY)) {
                return PickResult.withNoResult();
            }
            if (failed == null && m.state == ConnectivityState.TRANSIENT_FAILURE) {
                failed = m;
            }
        }
        String start = target + ": no ready worker meets " + shown(channel.and(call)) + ": the "
                + choice.meetingMembers.size() + " that do ";
        if (failed == null) {
            return PickResult.withError(Status.UNAVAILABLE.withDescription(start + "are not connected on this channel"
                    + " (its policy connects only some workers, as pick_first does; round_robin connects all)"));
        }
        return PickResult.withError(Status.UNAVAILABLE.withDescription(start + "cannot be reached (" + failed.url
                + ": " + failed.failure.getCode() + ": " + failed.failure.getDescription() + ")"));
    }

    private Choice choice(Requirements call) {
        FleetSnapshot snapshot = fleet.current();
        Choice known = choices.get(call);
        if (known != null && known.snapshot == snapshot) {
            return known;
        }
        Choice fresh = choose(snapshot, call);
        if (choices.size() >= MAX_CACHED) {
            choices.clear();
        }
        choices.put(call, fresh);
        return fresh;
    }

    private Choice choose(FleetSnapshot snapshot, Requirements call) {
        Requirements all = channel.and(call);
        List<WorkerInfo> meetingWorkers = snapshot.workersWith(all);
        Set<String> urls = new HashSet<>();
        for (WorkerInfo w : meetingWorkers) {
            urls.add(w.endpoint().url());
        }
        Set<Subchannel> meeting = new HashSet<>();
        List<Member> ready = new ArrayList<>();
        List<Member> meetingMembers = new ArrayList<>();
        for (Member m : members) {
            if (m.url != null && urls.contains(m.url)) {
                meeting.add(m.subchannel);
                meetingMembers.add(m);
                if (m.state == ConnectivityState.READY) {
                    ready.add(m);
                }
            }
        }
        Status none = null;
        if (meetingWorkers.isEmpty()) {
            none = Status.UNAVAILABLE.withDescription(target + ": no worker meets " + shown(all) + ": "
                    + lacking(snapshot, all));
        } else if (meetingMembers.isEmpty() && !comingUp()) {
            none = Status.UNAVAILABLE.withDescription(target + ": no worker of this channel meets " + shown(all)
                    + ": the " + meetingWorkers.size() + " compatible that do have no connection on it (another"
                    + " service, or a policy that connects only some workers, as pick_first does; round_robin"
                    + " connects all)");
        }
        return new Choice(snapshot, Set.copyOf(meeting), List.copyOf(ready), List.copyOf(meetingMembers), none);
    }

    /**
     * Whether the channel is still coming up: a picker published before the child started its
     * subchannels (outlier detection's graceful switch publishes one) has no members yet, and its
     * calls wait for the next picker rather than fail for want of a connection.
     */
    private boolean comingUp() {
        return childState == null || childState == ConnectivityState.CONNECTING || childState == ConnectivityState.IDLE;
    }

    /** E.g. {@code 3 compatible workers lack it (grpc://127.0.0.1:4711: lacks udf:geo_distance)}. */
    private static String lacking(FleetSnapshot snapshot, Requirements all) {
        int lack = 0;
        String first = null;
        for (WorkerInfo w : snapshot.workers()) {
            Optional<String> why = all.whyNotMetBy(w.capabilities());
            if (why.isPresent()) {
                lack++;
                if (first == null) {
                    first = w.endpoint().url() + ": " + why.get();
                }
            }
        }
        if (lack == 0) {
            return "snapshot " + snapshot.number() + " has no compatible worker";
        }
        return lack + (lack == 1 ? " compatible worker lacks it (" : " compatible workers lack it (")
                + PeerText.escape(first, 512) + ")";
    }

    private static String shown(Requirements r) {
        return PeerText.escape(r.toString(), 512);
    }

    private static String key(PickSubchannelArgs args) {
        String key = args.getCallOptions().getOption(KeyAffinityLoadBalancerProvider.KEY);
        return key != null ? key : args.getHeaders().get(KeyAffinityLoadBalancerProvider.KEY_HEADER);
    }

    @Override
    public String toString() {
        return "RequirementsPicker{channel=" + channel + ", child=" + child + "}";
    }
}
