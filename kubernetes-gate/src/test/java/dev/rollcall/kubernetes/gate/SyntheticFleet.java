package dev.rollcall.kubernetes.gate;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.kubernetes.gate.internal.PodVerdict;
import dev.rollcall.kubernetes.gate.internal.Verdicts;
import dev.rollcall.policy.SemverRangePolicy;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Snapshots as the resolver would publish them for the k8s backend's candidates (labelled with their
 * pod's name and UID), without a worker behind each: a fleet of a thousand pods needs no thousand
 * processes. Versions map to verdicts through a real semver policy ({@code ^1.0.0}).
 */
final class SyntheticFleet {

    static final VersionPolicy POLICY = SemverRangePolicy.of("^1.0.0");

    private final Map<String, String> uids = new LinkedHashMap<>();
    private final Map<String, String> versions = new LinkedHashMap<>();
    private final AtomicLong number = new AtomicLong();

    /** Pod {@code pod} (UID {@code uid}) runs {@code version}. */
    SyntheticFleet run(String pod, String uid, String version) {
        uids.put(pod, uid);
        versions.put(pod, version);
        return this;
    }

    SyntheticFleet run(Pod pod, String version) {
        return run(pod.getMetadata().getName(), pod.getMetadata().getUid(), version);
    }

    /** The wishes of the next snapshot, as the gate's listener computes them. */
    Map<String, PodVerdict> wishes(boolean costs) {
        FleetSnapshot.Builder b = FleetSnapshot.builder(number.incrementAndGet()).policy(POLICY.description());
        int port = 20_000;
        for (Map.Entry<String, String> e : versions.entrySet()) {
            String pod = e.getKey();
            WorkerEndpoint endpoint = WorkerEndpoint.of("127.0.0.1", port++).withLabels(Map.of("pod", pod,
                    WorkerEndpoint.INSTANCE_ID_LABEL, uids.get(pod)));
            WorkerInfo info = WorkerInfo.of(endpoint, e.getValue());
            Verdict verdict = POLICY.check(info);
            b.status(new WorkerStatus(endpoint, verdict.accepted() ? WorkerStatus.State.COMPATIBLE
                    : WorkerStatus.State.REJECTED, verdict.accepted() ? "" : verdict.reason(), Optional.of(info)));
        }
        return Verdicts.of(b.build(), POLICY, costs);
    }
}
