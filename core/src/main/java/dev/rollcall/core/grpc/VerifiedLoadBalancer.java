package dev.rollcall.core.grpc;

import dev.rollcall.core.internal.LiveResolvers;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerRegistry;
import io.grpc.Status;
import io.grpc.util.ForwardingLoadBalancerHelper;
import io.grpc.util.ForwardingSubchannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@value VerifiedLoadBalancerProvider#POLICY} policy: a child policy ({@code round_robin},
 * {@code pick_first}) does the picking; this one lets a pick through only when its subchannel's
 * current connection is verified. Every time a subchannel's connection becomes READY, the resolver
 * probes the worker anew; only if that probe is answered by the instance the current snapshot
 * accepted does the connection carry calls. Picks of unverified subchannels are retried on others
 * and otherwise wait for the next picker. The child sees every subchannel state unchanged, so its
 * own connection management works as usual.
 *
 * <p>Runs on the channel's synchronization context, like every load balancer; pickers are called
 * from any thread and read only volatile state.
 */
final class VerifiedLoadBalancer extends LoadBalancer {

    private static final Logger log = LoggerFactory.getLogger(VerifiedLoadBalancer.class);
    /** After a verification that failed, the next try comes with the next snapshot or after this. */
    private static final long RETRY_MILLIS = 1_000;

    private final Helper helper;
    private final GateHelper gate = new GateHelper();
    private final Set<Gated> subchannels = ConcurrentHashMap.newKeySet();
    private LiveResolvers.Handle fleet;
    private LoadBalancer child;
    private String childPolicy;
    private ConnectivityState childState = ConnectivityState.CONNECTING;
    private SubchannelPicker childPicker = new FixedPicker(PickResult.withNoResult());
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
        VerifiedLoadBalancerProvider.Config config = (VerifiedLoadBalancerProvider.Config)
                resolved.getLoadBalancingPolicyConfig();
        String wanted = config == null ? "round_robin" : config.childPolicy();
        Object childConfig = config == null ? null : config.childConfig();
        if (child == null || !wanted.equals(childPolicy)) {
            if (child != null) {
                child.shutdown();
            }
            child = LoadBalancerRegistry.getDefaultRegistry().getProvider(wanted).newLoadBalancer(gate);
            childPolicy = wanted;
        }
        for (Gated s : subchannels) {
            if (s.ready && !s.verified) {
                s.verify(); // the snapshot changed: what failed before may pass now
            }
        }
        return child.acceptResolvedAddresses(resolved.toBuilder().setLoadBalancingPolicyConfig(childConfig).build());
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
        subchannels.clear();
    }

    /** Hands the child's latest picker to the channel again, gated anew: waiting calls pick again. */
    private void repick() {
        if (!shutdown) {
            helper.updateBalancingState(childState, new GatedPicker(childPicker));
        }
    }

    /** The helper the child sees: its subchannels are gated, its pickers wrapped. */
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
            helper.updateBalancingState(state, new GatedPicker(picker));
        }
    }

    /** A subchannel whose connection is verified anew each time it becomes READY. */
    private final class Gated extends ForwardingSubchannel {
        private final Subchannel delegate;
        volatile boolean verified;
        boolean ready;       // on the synchronization context
        long connection;     // counts READY transitions; a verification answers for one of them

        Gated(Subchannel delegate) {
            this.delegate = delegate;
        }

        @Override
        protected Subchannel delegate() {
            return delegate;
        }

        @Override
        public void start(SubchannelStateListener listener) {
            subchannels.add(this);
            delegate.start(state -> {
                changed(state);
                listener.onSubchannelState(state);
            });
        }

        @Override
        public void shutdown() {
            subchannels.remove(this);
            verified = false;
            ready = false;
            super.shutdown();
        }

        private void changed(ConnectivityStateInfo state) {
            connection++;
            verified = false;
            ready = state.getState() == ConnectivityState.READY;
            if (ready) {
                verify();
            }
        }

        void verify() {
            LiveResolvers.Handle handle = fleet;
            String url = url();
            if (handle == null || url == null) {
                return;
            }
            long which = connection;
            handle.verify(url).whenComplete((ok, failure) -> helper.getSynchronizationContext().execute(() -> {
                if (shutdown || which != connection || !ready) {
                    return; // the connection it answered for is gone
                }
                if (Boolean.TRUE.equals(ok)) {
                    verified = true;
                    repick();
                } else {
                    log.debug("{}: connection to {} not verified (another instance, or not accepted)",
                            helper.getChannelTarget(), url);
                    helper.getSynchronizationContext().schedule(() -> {
                        if (!shutdown && which == connection && ready && !verified) {
                            verify();
                        }
                    }, RETRY_MILLIS, TimeUnit.MILLISECONDS, helper.getScheduledExecutorService());
                }
            }));
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

    /** The child's picker, letting through only subchannels whose connection is verified. */
    private static final class GatedPicker extends SubchannelPicker {
        private final SubchannelPicker child;

        GatedPicker(SubchannelPicker child) {
            this.child = child;
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            // round_robin hands out the next subchannel on each pick: a few more picks find a verified one.
            for (int i = 0; i < 8; i++) {
                PickResult r = child.pickSubchannel(args);
                Subchannel s = r.getSubchannel();
                if (s == null || !(s instanceof Gated g) || g.verified) {
                    return r;
                }
            }
            return PickResult.withNoResult();
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
