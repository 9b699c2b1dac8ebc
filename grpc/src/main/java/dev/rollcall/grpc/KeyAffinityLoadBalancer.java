package dev.rollcall.grpc;

import dev.rollcall.api.registry.KeyRouting;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link KeyAffinityLoadBalancerProvider}: one subchannel per worker address, all kept connected;
 * a picker that sends a keyed call to the key's rendezvous owner among every address (connected
 * or not, as {@code route(...)} chooses among every compatible worker). Runs on the channel's
 * synchronization context; pickers are immutable.
 */
final class KeyAffinityLoadBalancer extends LoadBalancer {

    private final Helper helper;
    /** By worker URL (or address, for groups without one). */
    private final Map<String, Member> members = new HashMap<>();

    KeyAffinityLoadBalancer(Helper helper) {
        this.helper = helper;
    }

    /** One worker's subchannel and its last state; on the synchronization context. */
    private static final class Member {
        final String url;
        final Subchannel subchannel;
        ConnectivityState state = ConnectivityState.IDLE;
        /** Why it is in TRANSIENT_FAILURE (the connection failed, or the gate refused it). */
        Status failure = Status.OK;

        Member(String url, Subchannel subchannel) {
            this.url = url;
            this.subchannel = subchannel;
        }
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolved) {
        Map<String, EquivalentAddressGroup> wanted = new HashMap<>();
        for (EquivalentAddressGroup group : resolved.getAddresses()) {
            String url = group.getAttributes().get(WorkerAttributes.URL);
            wanted.put(url != null ? url : group.getAddresses().toString(), group);
        }
        members.entrySet().removeIf(e -> {
            if (!wanted.containsKey(e.getKey())) {
                e.getValue().subchannel.shutdown();
                return true;
            }
            return false;
        });
        for (Map.Entry<String, EquivalentAddressGroup> e : wanted.entrySet()) {
            Member existing = members.get(e.getKey());
            if (existing != null) {
                existing.subchannel.updateAddresses(List.of(e.getValue()));
                continue;
            }
            Subchannel s = helper.createSubchannel(CreateSubchannelArgs.newBuilder()
                    .setAddresses(e.getValue()).build());
            Member m = new Member(e.getKey(), s);
            members.put(e.getKey(), m);
            s.start(state -> changed(m, state));
            s.requestConnection();
        }
        publish();
        return Status.OK;
    }

    private void changed(Member m, ConnectivityStateInfo state) {
        if (members.get(m.url) != m) {
            return;
        }
        m.state = state.getState();
        m.failure = state.getStatus();
        if (m.state == ConnectivityState.IDLE) {
            m.subchannel.requestConnection(); // every worker may own keys: keep them all connected
        }
        publish();
    }

    private void publish() {
        // In URL order, as route(...) sees the workers: a tie (practically never) goes to the lower URL.
        List<Member> all = members.values().stream().sorted(java.util.Comparator.comparing(m -> m.url)).toList();
        boolean anyReady = all.stream().anyMatch(m -> m.state == ConnectivityState.READY);
        boolean anyConnecting = all.stream().anyMatch(m -> m.state == ConnectivityState.CONNECTING
                || m.state == ConnectivityState.IDLE);
        ConnectivityState overall = anyReady ? ConnectivityState.READY
                : anyConnecting ? ConnectivityState.CONNECTING : ConnectivityState.TRANSIENT_FAILURE;
        Map<String, ConnectivityState> states = new HashMap<>();
        Map<String, Status> failures = new HashMap<>();
        all.forEach(m -> {
            states.put(m.url, m.state);
            failures.put(m.url, m.failure);
        });
        Status failed = overall != ConnectivityState.TRANSIENT_FAILURE ? null : all.stream().map(m -> m.failure)
                .filter(f -> !f.isOk()).findFirst().orElse(Status.UNAVAILABLE.withDescription("no worker can be reached"));
        helper.updateBalancingState(overall, new Picker(all, states, failures, failed));
    }

    @Override
    public void handleNameResolutionError(Status error) {
        if (members.isEmpty()) {
            helper.updateBalancingState(ConnectivityState.TRANSIENT_FAILURE, new SubchannelPicker() {
                @Override
                public PickResult pickSubchannel(PickSubchannelArgs args) {
                    return PickResult.withError(error);
                }
            });
        }
    }

    @Override
    public void shutdown() {
        members.values().forEach(m -> m.subchannel.shutdown());
        members.clear();
    }

    /** An immutable picture of the members and their states. */
    private static final class Picker extends SubchannelPicker {
        private final List<Member> members;
        private final Map<String, ConnectivityState> states;
        private final Map<String, Status> failures;
        private final List<Member> ready = new ArrayList<>();
        private final AtomicInteger turn = new AtomicInteger();
        /** When every member is in TRANSIENT_FAILURE: what unkeyed calls fail with; else null (they wait). */
        private final Status failed;

        Picker(List<Member> members, Map<String, ConnectivityState> states, Map<String, Status> failures,
               Status failed) {
            this.members = members;
            this.states = states;
            this.failures = failures;
            this.failed = failed;
            for (Member m : members) {
                if (states.get(m.url) == ConnectivityState.READY) {
                    ready.add(m);
                }
            }
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            String key = args.getCallOptions().getOption(KeyAffinityLoadBalancerProvider.KEY);
            if (key == null) {
                key = args.getHeaders().get(KeyAffinityLoadBalancerProvider.KEY_HEADER);
            }
            if (key == null) {
                if (ready.isEmpty()) {
                    return failed != null ? PickResult.withError(failed) : PickResult.withNoResult();
                }
                return PickResult.withSubchannel(ready.get(Math.floorMod(turn.getAndIncrement(), ready.size())).subchannel);
            }
            Member owner = null;
            long best = 0;
            for (Member m : members) {
                long w = KeyRouting.weight(key, m.url);
                if (owner == null || Long.compareUnsigned(w, best) > 0) {
                    owner = m;
                    best = w;
                }
            }
            if (owner == null) {
                return PickResult.withNoResult();
            }
            ConnectivityState state = states.get(owner.url);
            if (state == ConnectivityState.READY) {
                return PickResult.withSubchannel(owner.subchannel);
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE) {
                return PickResult.withError(Status.UNAVAILABLE.withDescription("the owner of key '" + key + "', "
                        + owner.url + ", cannot be reached; its keys move once the resolver takes it out ("
                        + failures.get(owner.url).getCode() + ": " + failures.get(owner.url).getDescription() + ")"));
            }
            return PickResult.withNoResult();
        }
    }
}
