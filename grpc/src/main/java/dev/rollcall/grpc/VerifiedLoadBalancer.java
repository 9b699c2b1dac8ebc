package dev.rollcall.grpc;

import dev.rollcall.api.Requirements;
import dev.rollcall.core.internal.LiveResolvers;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerRegistry;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.util.ForwardingLoadBalancerHelper;
import io.grpc.util.ForwardingSubchannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@value VerifiedLoadBalancerProvider#POLICY} policy: a child policy ({@code round_robin},
 * {@code pick_first}, {@code rollcall_key_affinity}) does the picking; this one decides when the
 * child may see a subchannel as READY, as grpc's client-side health checking does. Each time a
 * subchannel's connection becomes READY, the gate asks {@code WorkerInfo} over <em>that
 * connection</em> ({@link ConnectionCheck}, with the resolver's probe deadline and answer bound);
 * the child sees CONNECTING meanwhile, READY only once the answering process is the instance (and
 * version) the current snapshot accepted for the worker's URL, and TRANSIENT_FAILURE with the
 * reason otherwise, so its picker never holds a connection that was not verified over itself. A
 * connection reaching another process than the resolver's own (a successor behind the same
 * address: an {@code SO_REUSEPORT} hot restart, a layer-4 balancer, a NAT) therefore carries no
 * call. Each new snapshot is checked against the answers of the connections open: a refused one
 * becomes READY once a snapshot accepts its process, a verified one is refused once none does. A
 * check that got no answer is asked again after {@link #RETRY_MILLIS} or with the next snapshot.
 * With {@code rollcall.calls.outlier-detection.*} on, the child is grpc-java's outlier detection
 * with the picking policy beneath it: it sees the gated subchannels, so it judges and ejects only
 * verified connections, by gRPC's per-call statistics.
 * The child's picker is wrapped in a {@link RequirementsPicker}: a call with requirements (its own
 * {@link RollcallCallOptions#REQUIREMENTS} and the target's {@code ?require=}) goes only to a worker
 * that meets them in the current snapshot.
 *
 * <p>Runs on the channel's synchronization context, like every load balancer; the checks' answers
 * hop back to it.
 */
final class VerifiedLoadBalancer extends LoadBalancer {

    private static final Logger log = LoggerFactory.getLogger(VerifiedLoadBalancer.class);
    /** After a check that got no answer, the next try comes with the next snapshot or after this. */
    static final long RETRY_MILLIS = 1_000;

    private final Helper helper;
    private final GateHelper gate = new GateHelper();
    private final Set<Gated> subchannels = new HashSet<>(); // on the synchronization context
    private LiveResolvers.Handle fleet;
    private LoadBalancer child;
    private String childPolicy;
    /** The policy that picks (beneath outlier detection when that is on). */
    private String picking;
    /** The target's {@code ?require=}: what every call needs on top of its own requirements. */
    private Requirements required = Requirements.none();
    /** The child's last state and picker: published again, wrapped, when the snapshot changes. */
    private ConnectivityState childState;
    private SubchannelPicker childPicker;
    private boolean shutdown;

    VerifiedLoadBalancer(Helper helper) {
        this.helper = helper;
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolved) {
        LiveResolvers.Handle handle = resolved.getAttributes().get(RollcallNameResolver.FLEET);
        if (handle == null) {
            Status wrong = Status.UNAVAILABLE.withDescription(VerifiedLoadBalancerProvider.POLICY
                    + " needs the addresses of a rollcall: target; this channel's resolver is another one");
            handleNameResolutionError(wrong);
            return wrong;
        }
        fleet = handle;
        Requirements channelRequirements = resolved.getAttributes().get(RollcallNameResolver.REQUIRED);
        required = channelRequirements == null ? Requirements.none() : channelRequirements;
        VerifiedLoadBalancerProvider.Config config = (VerifiedLoadBalancerProvider.Config)
                resolved.getLoadBalancingPolicyConfig();
        String wanted = config == null ? "round_robin" : config.childPolicy();
        Object childConfig = config == null ? null : config.childConfig();
        picking = config == null ? wanted : config.picking();
        if (child == null || !wanted.equals(childPolicy)) {
            if (child != null) {
                child.shutdown();
            }
            childState = null;
            childPicker = null;
            child = LoadBalancerRegistry.getDefaultRegistry().getProvider(wanted).newLoadBalancer(gate);
            childPolicy = wanted;
        }
        for (Gated s : List.copyOf(subchannels)) {
            s.snapshotChanged();
        }
        Status accepted = child.acceptResolvedAddresses(
                resolved.toBuilder().setLoadBalancingPolicyConfig(childConfig).build());
        if (childPicker != null) {
            // Calls waiting for a worker with a capability are picked again: this snapshot may have one.
            helper.updateBalancingState(childState, withRequirements(childState, childPicker));
        }
        return accepted;
    }

    /** The child's picker, with calls that have requirements sent only to workers that meet them. */
    private SubchannelPicker withRequirements(ConnectivityState state, SubchannelPicker picker) {
        if (fleet == null) {
            return picker;
        }
        List<RequirementsPicker.Member> members = new ArrayList<>(subchannels.size());
        for (Gated s : subchannels) {
            members.add(s.member());
        }
        return new RequirementsPicker(picker, state, members, fleet, required,
                KeyAffinityLoadBalancerProvider.POLICY.equals(picking), helper.getChannelTarget());
    }

    /**
     * Every error a {@code rollcall:} resolver reports is the fleet's word, not a lookup that
     * failed: no compatible worker, or the resolver closed. So unlike a DNS error it does not keep
     * the last addresses: the connections are dropped and calls fail at once with the resolver's
     * reason (wait-for-ready calls wait for the next compatible worker instead).
     */
    @Override
    public void handleNameResolutionError(Status error) {
        if (child != null) {
            child.shutdown();
            child = null;
            childPolicy = null;
            childState = null;
            childPicker = null;
        }
        helper.updateBalancingState(ConnectivityState.TRANSIENT_FAILURE, new FixedPicker(PickResult.withError(error)));
    }

    @Override
    public void requestConnection() {
        if (child != null) {
            child.requestConnection();
        }
    }

    @Override
    public void shutdown() {
        shutdown = true;
        if (child != null) {
            child.shutdown();
        }
        for (Gated s : List.copyOf(subchannels)) {
            s.stopChecking();
        }
        subchannels.clear();
    }

    /** The helper the child sees: its subchannels are gated. */
    private final class GateHelper extends ForwardingLoadBalancerHelper {
        @Override
        protected Helper delegate() {
            return helper;
        }

        @Override
        public Subchannel createSubchannel(CreateSubchannelArgs args) {
            return new Gated(helper.createSubchannel(args));
        }

        @Override
        public void updateBalancingState(ConnectivityState state, SubchannelPicker picker) {
            childState = state;
            childPicker = picker;
            helper.updateBalancingState(state, withRequirements(state, picker));
        }
    }

    /**
     * A subchannel whose child sees READY only while its current connection is verified. All
     * state is on the synchronization context.
     */
    private final class Gated extends ForwardingSubchannel {
        private final Subchannel delegate;
        private SubchannelStateListener listener;
        private ConnectivityState raw = ConnectivityState.IDLE;
        private ConnectivityStateInfo shown;
        /** Counts the connection's state changes: a check answers for the connection it was asked on. */
        private long connection;
        /** What the current connection's process answered; null until it did. */
        private WorkerInfoResponse answer;
        private ClientCall<?, ?> checking;
        private SynchronizationContext.ScheduledHandle retry;
        /** The resolver was asked to probe anew since this connection came up (see {@link #refuse}). */
        private boolean nudged;

        Gated(Subchannel delegate) {
            this.delegate = delegate;
        }

        @Override
        protected Subchannel delegate() {
            return delegate;
        }

        @Override
        public void start(SubchannelStateListener listener) {
            this.listener = listener;
            subchannels.add(this);
            delegate.start(this::changed);
        }

        @Override
        public void shutdown() {
            subchannels.remove(this);
            stopChecking();
            super.shutdown();
        }

        private void changed(ConnectivityStateInfo state) {
            connection++;
            stopChecking();
            answer = null;
            nudged = false;
            raw = state.getState();
            if (raw == ConnectivityState.SHUTDOWN) {
                subchannels.remove(this);
            }
            if (raw == ConnectivityState.READY) {
                show(ConnectivityStateInfo.forNonError(ConnectivityState.CONNECTING));
                check();
            } else {
                show(state);
            }
        }

        /** Asks the current connection who is at its other end. */
        private void check() {
            LiveResolvers.Handle handle = fleet;
            if (handle == null || shutdown) {
                return;
            }
            long which = connection;
            SynchronizationContext sync = helper.getSynchronizationContext();
            checking = ConnectionCheck.start(delegate.asChannel(), handle.probeTimeout(), handle.maxAnswerBytes(),
                    result -> sync.execute(() -> {
                        if (shutdown || which != connection || raw != ConnectivityState.READY) {
                            return; // the connection it answered for is gone
                        }
                        checking = null;
                        if (result instanceof ConnectionCheck.Answered a) {
                            answer = a.answer();
                            decide();
                        } else {
                            unverified(((ConnectionCheck.Failed) result).reason());
                        }
                    }));
        }

        /** The snapshot the connection's answer is held against may have changed. */
        void snapshotChanged() {
            if (raw != ConnectivityState.READY || shutdown) {
                return;
            }
            if (answer != null) {
                decide();
            } else if (checking == null) {
                cancelRetry();
                check(); // it got no answer before: ask again now
            }
        }

        private void decide() {
            String url = url();
            String refusal = url == null ? "the address carries no worker URL (not from a rollcall: target)"
                    : ConnectionCheck.refusal(fleet.current(), url, answer);
            if (refusal == null) {
                show(ConnectivityStateInfo.forNonError(ConnectivityState.READY));
            } else {
                refuse(url, refusal);
            }
        }

        /**
         * The connection reached a process the snapshot does not accept: no call until one does. The
         * first time on a connection the resolver is asked to probe the worker anew (it may not know
         * yet that the worker restarted: without kept connections it learns that only at its next
         * probe), and the child sees CONNECTING, so that calls wait for that probe rather than fail;
         * then TRANSIENT_FAILURE with the reason, until a snapshot accepts the process.
         */
        private void refuse(String url, String refusal) {
            if (!nudged && url != null) {
                nudged = true;
                show(ConnectivityStateInfo.forNonError(ConnectivityState.CONNECTING));
                long which = connection;
                SynchronizationContext sync = helper.getSynchronizationContext();
                fleet.verify(url).whenComplete((ok, failure) -> sync.execute(() -> {
                    if (!shutdown && which == connection && raw == ConnectivityState.READY && answer != null) {
                        decide();
                    }
                }));
                return;
            }
            if (shown == null || shown.getState() != ConnectivityState.TRANSIENT_FAILURE) {
                log.info("{}: {}; no call uses it", helper.getChannelTarget(), refusal);
            }
            show(ConnectivityStateInfo.forTransientFailure(Status.UNAVAILABLE.withDescription(
                    helper.getChannelTarget() + ": " + refusal + "; no call uses it")));
        }

        /** The check got no answer: not usable; asked again later, or with the next snapshot. */
        private void unverified(String reason) {
            show(ConnectivityStateInfo.forTransientFailure(Status.UNAVAILABLE.withDescription(
                    helper.getChannelTarget() + ": this connection to " + url() + " could not be verified: " + reason)));
            log.debug("{}: connection to {} not verified: {}", helper.getChannelTarget(), url(), reason);
            long which = connection;
            retry = helper.getSynchronizationContext().schedule(() -> {
                retry = null;
                if (!shutdown && which == connection && raw == ConnectivityState.READY && answer == null
                        && checking == null) {
                    check();
                }
            }, RETRY_MILLIS, TimeUnit.MILLISECONDS, helper.getScheduledExecutorService());
        }

        private void show(ConnectivityStateInfo state) {
            if (!same(state, shown) && listener != null) {
                shown = state;
                listener.onSubchannelState(state);
            }
        }

        /** Equal to the child: states, and for failures the status (which has no equals of its own). */
        private static boolean same(ConnectivityStateInfo a, ConnectivityStateInfo b) {
            return b != null && a.getState() == b.getState() && a.getStatus().getCode() == b.getStatus().getCode()
                    && java.util.Objects.equals(a.getStatus().getDescription(), b.getStatus().getDescription());
        }

        void stopChecking() {
            if (checking != null) {
                checking.cancel("the connection it verifies is gone", null);
                checking = null;
            }
            cancelRetry();
        }

        private void cancelRetry() {
            if (retry != null) {
                retry.cancel();
                retry = null;
            }
        }

        /** As the child last saw it. */
        RequirementsPicker.Member member() {
            ConnectivityStateInfo state = shown != null ? shown : ConnectivityStateInfo.forNonError(ConnectivityState.IDLE);
            return new RequirementsPicker.Member(this, url(), state.getState(), state.getStatus());
        }

        private String url() {
            for (EquivalentAddressGroup group : delegate.getAllAddresses()) {
                String url = group.getAttributes().get(WorkerAttributes.URL);
                if (url != null) {
                    return url;
                }
            }
            return null;
        }
    }

    /** Always the same result. */
    private static final class FixedPicker extends SubchannelPicker {
        private final PickResult result;

        FixedPicker(PickResult result) {
            this.result = result;
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            return result;
        }
    }
}
