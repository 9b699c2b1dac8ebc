package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Something that changed between two consecutive snapshots, for users who react to changes rather
 * than read state: a worker joined or left the compatible set, a worker was rejected, the policy
 * switched cohorts, a worker answered another version than discovery claims, a worker was damped
 * for flapping or returned. Immutable. Each event names the snapshot that first shows it.
 */
public sealed interface FleetEvent {

    /** The number of the snapshot that first shows this change. */
    long snapshot();

    /** A worker became compatible: it is in {@link FleetSnapshot#workers()} from this snapshot on. */
    record WorkerJoined(long snapshot, WorkerInfo worker) implements FleetEvent {
        public WorkerJoined {
            Objects.requireNonNull(worker, "worker");
        }
    }

    /**
     * A compatible worker is no longer: it left discovery, stopped answering, or is now rejected
     * (then a {@link WorkerRejected} follows too).
     */
    record WorkerLeft(long snapshot, WorkerEndpoint endpoint, String reason) implements FleetEvent {
        public WorkerLeft {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** A worker that answered is now rejected by the policy (it was not rejected before). */
    record WorkerRejected(long snapshot, WorkerInfo worker, String reason) implements FleetEvent {
        public WorkerRejected {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * A worker started draining (it finishes its work in flight and takes no new work); a
     * {@link WorkerLeft} precedes it when it was compatible.
     */
    record WorkerDraining(long snapshot, WorkerEndpoint endpoint) implements FleetEvent {
        public WorkerDraining {
            Objects.requireNonNull(endpoint, "endpoint");
        }
    }

    /** A draining worker resumed serving (a {@link WorkerJoined} follows when it is compatible again). */
    record WorkerResumed(long snapshot, WorkerEndpoint endpoint) implements FleetEvent {
        public WorkerResumed {
            Objects.requireNonNull(endpoint, "endpoint");
        }
    }

    /**
     * The policy's chosen cohort changed, e.g. from {@code 2.0.0} to {@code 2.1.0} during a rollout;
     * {@code from} is empty at the first choice, {@code to} when no cohort qualifies any more.
     */
    record CohortSwitched(long snapshot, Optional<String> from, Optional<String> to, String explanation)
            implements FleetEvent {
        public CohortSwitched {
            Objects.requireNonNull(from, "from");
            Objects.requireNonNull(to, "to");
            Objects.requireNonNull(explanation, "explanation");
        }
    }

    /**
     * A worker answered a probe with another version than its discovery metadata claims
     * ({@link WorkerEndpoint#VERSION_LABEL}): {@link #description()} is
     * {@code claimed 1.4.0, answered 1.5.0}. The answer wins: the policy judged {@code answered}.
     * Told once per worker and pair of versions (again when either changes), whatever the
     * worker's state; never with a protocol that takes the version from discovery ({@code none},
     * {@code grpc-health}), whose answer is the claim.
     */
    record VersionClaimDiffers(long snapshot, WorkerEndpoint endpoint, String claimed, String answered)
            implements FleetEvent {
        public VersionClaimDiffers {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(claimed, "claimed");
            Objects.requireNonNull(answered, "answered");
        }

        /** {@code claimed 1.4.0, answered 1.5.0}. */
        public String description() {
            return "claimed " + claimed + ", answered " + answered;
        }
    }

    /**
     * A worker changed what snapshots show of it too often (its verdict or version, in and out of
     * use: a buggy health loop, or a hostile worker) and is damped: from this snapshot on it is
     * {@link WorkerStatus.State#REJECTED} whatever it answers, with a {@link #reason()} that starts
     * with {@value #REASON_START} and says until when (a hold may be extended while it keeps
     * flapping, without another event). Told once per hold; {@link WorkerUndamped} ends it.
     */
    record WorkerDamped(long snapshot, WorkerEndpoint endpoint, String reason) implements FleetEvent {
        /** How the reason of a damped worker's status starts. */
        public static final String REASON_START = "damped for flapping";

        public WorkerDamped {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(reason, "reason");
        }

        /** Whether {@code status} is that of a worker damped for flapping. */
        public static boolean shows(WorkerStatus status) {
            return status != null && status.state() == WorkerStatus.State.REJECTED
                    && status.reason().startsWith(REASON_START);
        }
    }

    /** A worker damped for flapping ({@link WorkerDamped}) stopped flapping and is judged as any other again. */
    record WorkerUndamped(long snapshot, WorkerEndpoint endpoint) implements FleetEvent {
        public WorkerUndamped {
            Objects.requireNonNull(endpoint, "endpoint");
        }
    }

    /**
     * The events that lead from {@code before} to {@code after}, in a fixed order: the cohort
     * switch, then workers that left, started draining, resumed, were rejected, joined, answered
     * another version than claimed, were damped for flapping, returned from it (each by URL).
     */
    static List<FleetEvent> between(FleetSnapshot before, FleetSnapshot after) {
        long n = after.number();
        List<FleetEvent> events = new ArrayList<>();
        // The cohorts without the selection reports: a report lists every worker left out (most of
        // the fleet while converging), and a snapshot builds it only when asked.
        Optional<String> from = ImmutableFleetSnapshot.cohortOf(before);
        Optional<String> to = ImmutableFleetSnapshot.cohortOf(after);
        if (!from.equals(to)) {
            events.add(new CohortSwitched(n, from, to, after.selection().explanation()));
        }
        // Only the workers whose status differs can make an event: each pass below reads those alone.
        List<WorkerStatus[]> changed = changed(before, after);
        for (WorkerStatus[] p : changed) {
            WorkerStatus was = p[0];
            WorkerStatus is = p[1];
            if (was != null && was.state() == WorkerStatus.State.COMPATIBLE) {
                if (is == null) {
                    events.add(new WorkerLeft(n, was.endpoint(), "left discovery"));
                } else if (is.state() != WorkerStatus.State.COMPATIBLE) {
                    events.add(new WorkerLeft(n, was.endpoint(), is.state().name().toLowerCase(java.util.Locale.ROOT)
                            + (is.reason().isEmpty() ? "" : ": " + is.reason())));
                }
            }
        }
        for (WorkerStatus[] p : changed) {
            WorkerStatus was = p[0];
            WorkerStatus is = p[1];
            if (is != null && is.state() == WorkerStatus.State.DRAINING
                    && (was == null || was.state() != WorkerStatus.State.DRAINING)) {
                events.add(new WorkerDraining(n, is.endpoint()));
            }
        }
        for (WorkerStatus[] p : changed) {
            WorkerStatus was = p[0];
            WorkerStatus is = p[1];
            if (was != null && was.state() == WorkerStatus.State.DRAINING && is != null && is.info().isPresent()
                    && is.state() != WorkerStatus.State.DRAINING && is.state() != WorkerStatus.State.PENDING
                    && is.state() != WorkerStatus.State.UNREACHABLE) {
                events.add(new WorkerResumed(n, is.endpoint()));
            }
        }
        for (WorkerStatus[] p : changed) {
            WorkerStatus was = p[0];
            WorkerStatus is = p[1];
            if (is != null && is.state() == WorkerStatus.State.REJECTED
                    && (was == null || was.state() != WorkerStatus.State.REJECTED)) {
                events.add(new WorkerRejected(n, is.info().orElseThrow(), is.reason()));
            }
        }
        for (WorkerStatus[] p : changed) {
            WorkerStatus was = p[0];
            WorkerStatus is = p[1];
            if (is != null && is.state() == WorkerStatus.State.COMPATIBLE
                    && (was == null || was.state() != WorkerStatus.State.COMPATIBLE)) {
                events.add(new WorkerJoined(n, is.info().orElseThrow()));
            }
        }
        ClaimedVersions.differences(changed, n, events);
        for (WorkerStatus[] p : changed) {
            if (p[1] != null && WorkerDamped.shows(p[1]) && !WorkerDamped.shows(p[0])) {
                events.add(new WorkerDamped(n, p[1].endpoint(), p[1].reason()));
            }
        }
        for (WorkerStatus[] p : changed) {
            if (p[1] != null && WorkerDamped.shows(p[0]) && !WorkerDamped.shows(p[1])) {
                events.add(new WorkerUndamped(n, p[1].endpoint()));
            }
        }
        return events;
    }

    /**
     * The statuses that differ between the two snapshots, as pairs {@code {was, is}} (either null
     * for a worker that joined or left), in URL order. A status both snapshots hold (the same
     * object: the resolver hands an unchanged worker's status over again) makes no event and costs
     * one comparison of references: hashing every status of both snapshots would make each event
     * listener (the metrics' among them) pay for the whole fleet on every snapshot, beside the probes.
     */
    private static List<WorkerStatus[]> changed(FleetSnapshot before, FleetSnapshot after) {
        WorkerStatus[] a = inUrlOrder(before);
        WorkerStatus[] b = inUrlOrder(after);
        List<WorkerStatus[]> changed = new ArrayList<>();
        int i = 0;
        int j = 0;
        while (i < a.length || j < b.length) {
            WorkerStatus was = i < a.length ? a[i] : null;
            WorkerStatus is = j < b.length ? b[j] : null;
            if (was == is) {
                i++;
                j++;
                continue;
            }
            int c = was == null ? 1 : is == null ? -1 : was.endpoint().url().compareTo(is.endpoint().url());
            if (c == 0) {
                if (!was.equals(is)) {
                    changed.add(new WorkerStatus[] {was, is});
                }
                i++;
                j++;
            } else if (c < 0) {
                changed.add(new WorkerStatus[] {was, null});
                i++;
            } else {
                changed.add(new WorkerStatus[] {null, is});
                j++;
            }
        }
        return changed;
    }

    /**
     * A snapshot's statuses in URL order, read-only by convention: Rollcall's own snapshots' array
     * as it is (walked directly, not through the read-only list over it, so that a listener's
     * cost per snapshot is a loop over an array), sorted copies for any other.
     */
    private static WorkerStatus[] inUrlOrder(FleetSnapshot snapshot) {
        if (snapshot instanceof ImmutableFleetSnapshot own) {
            return own.inUrlOrder(); // in URL order by construction; never written
        }
        WorkerStatus[] sorted = snapshot.statuses().toArray(new WorkerStatus[0]);
        java.util.Arrays.sort(sorted, java.util.Comparator.comparing(st -> st.endpoint().url()));
        return sorted;
    }
}
