package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import java.util.List;
import java.util.Optional;

/**
 * Read-only view: which endpoints may be used, and why the others may not.
 *
 * <p>Every method answers from one immutable snapshot; implementations are thread-safe and never
 * block.
 */
public interface WorkerEndpoints {

    /** The compatible endpoints, ordered by URL. */
    List<WorkerEndpoint> compatibleEndpoints();

    /**
     * The status of one candidate, looked up by its URL (any accepted spelling, e.g.
     * {@code http://h:1} for {@code grpc://h:1}) or by the instance id it reported. A string that
     * parses as an endpoint URL is looked up as a URL only, never as an instance id.
     */
    Optional<WorkerStatus> status(String endpointId);

    /**
     * The endpoints to send new work for {@code service} to: the compatible workers that offer it,
     * on the newest version among them (semantic-version order), ordered by URL. During a rolling
     * upgrade this moves to the new version as soon as one compatible worker offers the service on
     * it. Empty when no compatible worker offers it.
     */
    List<WorkerEndpoint> latestEndpoints(String service);

    /** Every candidate's status, ordered by URL. */
    List<WorkerStatus> statuses();
}
