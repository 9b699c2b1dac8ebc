package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The resolver's verdicts as wishes per pod: which pods carry what condition and deletion cost. A
 * pure function of one snapshot and the policy; pods that are not candidates in the snapshot get no
 * wish (the gate leaves them alone).
 */
public final class Verdicts {

    /** The label of a k8s candidate that names its pod (the EndpointSlice endpoint's {@code targetRef}). */
    static final String POD_LABEL = "pod";

    private Verdicts() {
    }

    /**
     * One wish per pod of {@code snapshot}'s candidates.
     *
     * @param policy the resolver's policy: a worker it rejects only for the fleet (a rollout's cohort
     *               not chosen yet) while {@link VersionPolicy#check} accepts it counts toward the next
     *               cohort, and its gate is {@code True}, or a rollout could never reach its quorum
     * @param costs  whether {@code pod-deletion-cost} is on
     */
    public static Map<String, PodVerdict> of(FleetSnapshot snapshot, VersionPolicy policy, boolean costs) {
        Map<String, PodVerdict> wishes = new LinkedHashMap<>();
        for (WorkerStatus status : snapshot.statuses()) {
            WorkerEndpoint endpoint = status.endpoint();
            String pod = endpoint.labels().get(POD_LABEL);
            if (pod == null || pod.isEmpty()) {
                continue;
            }
            String uid = endpoint.labels().getOrDefault(WorkerEndpoint.INSTANCE_ID_LABEL, "");
            wishes.put(pod, wish(pod, uid, status, policy, costs, snapshot.selection().cohort().isPresent()));
        }
        return wishes;
    }

    /**
     * @param cohorts whether the policy chooses a cohort ({@code rollout}): a worker left out only by
     *                that choice counts toward the next cohort; under another policy the same case is a
     *                fleet-level hold of a version the policy accepts (a worker damped for flapping)
     */
    private static PodVerdict wish(String pod, String uid, WorkerStatus status, VersionPolicy policy, boolean costs,
                                   boolean cohorts) {
        String version = status.info().map(i -> "version '" + PeerText.escape(i.version(), 64) + "'").orElse("");
        return switch (status.state()) {
            case COMPATIBLE, OUTSIDE_SUBSET, LACKS_REQUIREMENT -> new PodVerdict(pod, uid, PodVerdict.Condition.TRUE,
                    "Compatible", message(version + " accepted by " + policy.description()),
                    costs ? PodVerdict.Cost.CLEAR : PodVerdict.Cost.UNCHANGED);
            case REJECTED -> status.info().isPresent() && policy.check(status.info().get()).accepted()
                    ? new PodVerdict(pod, uid, PodVerdict.Condition.TRUE, cohorts ? "CountsTowardCohort" : "VersionAccepted",
                            message(status.reason()), costs ? PodVerdict.Cost.OUTSIDE : PodVerdict.Cost.UNCHANGED)
                    : new PodVerdict(pod, uid, PodVerdict.Condition.FALSE, "Incompatible", message(status.reason()),
                            costs ? PodVerdict.Cost.OUTSIDE : PodVerdict.Cost.UNCHANGED);
            case PENDING, UNREACHABLE, NOT_SERVING -> new PodVerdict(pod, uid,
                    PodVerdict.Condition.FALSE_UNLESS_TRUE, "NotVerified",
                    message("not verified yet: " + (status.reason().isEmpty() ? status.state().name().toLowerCase()
                            : status.reason())), costs ? PodVerdict.Cost.OUTSIDE : PodVerdict.Cost.UNCHANGED);
            case DRAINING -> new PodVerdict(pod, uid, PodVerdict.Condition.UNCHANGED, "Draining", message("draining"),
                    costs ? PodVerdict.Cost.DRAINING : PodVerdict.Cost.UNCHANGED);
        };
    }

    private static String message(String text) {
        return PeerText.escape(text, PodVerdict.MAX_MESSAGE_CHARS);
    }
}
