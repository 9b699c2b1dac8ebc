package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;

/**
 * Claim against answer: a worker whose discovery metadata claims one version
 * ({@link WorkerEndpoint#VERSION_LABEL}) and whose probe answered another. The answer is what the
 * policy judged; this only tells of the difference, once per pair. Used by
 * {@link FleetEvent#between} alone.
 */
final class ClaimedVersions {

    private ClaimedVersions() {
    }

    /**
     * Adds a {@link FleetEvent.VersionClaimDiffers} for each worker whose pair is new: {@code changed}
     * holds the statuses that differ between two snapshots as {@code {was, is}} (an unchanged status
     * tells nothing new); {@code snapshot} is the later one's number.
     */
    static void differences(List<WorkerStatus[]> changed, long snapshot, List<FleetEvent> events) {
        for (WorkerStatus[] pair : changed) {
            WorkerStatus was = pair[0];
            WorkerStatus is = pair[1];
            String claimed = is == null ? null : differingClaim(is);
            if (claimed == null) {
                continue;
            }
            String answered = is.info().orElseThrow().version();
            if (was != null && claimed.equals(differingClaim(was))
                    && answered.equals(was.info().orElseThrow().version())) {
                continue; // told already
            }
            events.add(new FleetEvent.VersionClaimDiffers(snapshot, is.endpoint(), claimed, answered));
        }
    }

    /** The claim of {@code status}'s candidate when its answer says another version; else null. */
    private static String differingClaim(WorkerStatus status) {
        if (status.info().isEmpty() || status.endpoint().labels().isEmpty()) {
            return null;
        }
        String claimed = status.endpoint().labels().get(WorkerEndpoint.VERSION_LABEL);
        WorkerInfo info = status.info().get();
        return claimed == null || claimed.isEmpty() || claimed.equals(info.version()) ? null : claimed;
    }
}
