package dev.rollcall.protocol.spi;

import dev.rollcall.api.Capabilities;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Answers built from a candidate's discovery metadata, for protocols whose worker does not say its
 * version ({@code none}, {@code grpc-health}, a user's): the version is the candidate's
 * {@link WorkerEndpoint#VERSION_LABEL}, the instance id its {@link WorkerEndpoint#INSTANCE_ID_LABEL}
 * (or none), its capabilities its {@link WorkerEndpoint#CAPABILITIES_LABEL} (or none), its labels
 * discovery's, without Rollcall's own {@code rollcall.*} ones. Stateless and thread-safe.
 */
public final class DiscoveryAnswers {

    /** How much of a malformed capabilities label a reason shows. */
    private static final int MAX_SHOWN_CHARS = 120;

    private DiscoveryAnswers() {
    }

    /**
     * The candidate's claimed version (and capabilities) as an answer in {@code state}, or a failure
     * ({@code FAILED_PRECONDITION}) naming the label, the protocol and the key when it has no
     * version or one that breaks the version's bounds, or capabilities that are not a list
     * {@link Capabilities#parse} reads (the label and its value named, escaped).
     *
     * @param protocol the protocol's name, for the reason ("... the grpc-health protocol
     *                 (rollcall.probe.protocol) ...")
     */
    public static ProbeOutcome answer(WorkerEndpoint candidate, ServingState state, String protocol) {
        String claimed = candidate.labels().get(WorkerEndpoint.VERSION_LABEL);
        if (claimed == null || claimed.isEmpty()) {
            return new ProbeOutcome.Failed(Status.Code.FAILED_PRECONDITION, "no version: the " + protocol
                    + " protocol (rollcall.probe.protocol) takes it from discovery's label "
                    + WorkerEndpoint.VERSION_LABEL + ", and this candidate has none (see docs/discovery-versions.md)");
        }
        String problem = WorkerEndpoint.versionLabelProblem(claimed);
        if (problem != null) {
            return new ProbeOutcome.Failed(Status.Code.FAILED_PRECONDITION, "bad label "
                    + WorkerEndpoint.VERSION_LABEL + ": " + PeerText.escape(problem));
        }
        Capabilities capabilities;
        String listed = candidate.labels().getOrDefault(WorkerEndpoint.CAPABILITIES_LABEL, "");
        try {
            capabilities = Capabilities.parse(listed);
        } catch (IllegalArgumentException e) {
            // Left out, not kept without capabilities: whoever wrote discovery meant to claim some,
            // and a worker served to every query but the ones it was written for hides the mistake.
            return new ProbeOutcome.Failed(Status.Code.FAILED_PRECONDITION, "bad label "
                    + WorkerEndpoint.CAPABILITIES_LABEL + "='" + PeerText.escape(listed, MAX_SHOWN_CHARS) + "': "
                    + PeerText.escape(e.getMessage()));
        }
        String instance = candidate.labels().getOrDefault(WorkerEndpoint.INSTANCE_ID_LABEL, "");
        Map<String, String> labels = new TreeMap<>();
        candidate.labels().forEach((k, v) -> {
            if (!k.startsWith("rollcall.")) {
                labels.put(k, v);
            }
        });
        return new ProbeOutcome.Answered(new WorkerInfo(candidate, claimed, instance, labels, List.of(),
                capabilities), state);
    }
}
