package dev.rollcall.spring.autoconfigure;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.Readiness;
import dev.rollcall.core.WorkerResolver;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/rollcall}: the resolver's current snapshot as JSON — every candidate with its
 * state, version and reason, the counts, the policy, discovery and its staleness, readiness — and
 * {@code /actuator/rollcall/{host:port}}: one candidate in detail (instance id, labels, services),
 * or 404 when it is not a candidate. Each answer is one snapshot, read without blocking. Every
 * field is sent, {@code null} included, although the actuator's JSON leaves nulls out: a client that
 * checks for {@code staleSince} reads "healthy" from a null, not from a field that is sometimes there.
 */
@Endpoint(id = "rollcall")
public final class RollcallEndpoint {

    private final WorkerResolver resolver;

    public RollcallEndpoint(WorkerResolver resolver) {
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    /** The whole fleet. */
    @ReadOperation
    public Fleet fleet() {
        FleetSnapshot s = resolver.pin();
        List<Candidate> candidates = s.statuses().stream().map(RollcallEndpoint::candidate).toList();
        return new Fleet(s.number(), s.publishedAt().toString(), s.policy(), resolver.discoveryDescription(),
                s.staleSince().map(Object::toString).orElse(null), s.discoveryProblem().orElse(null), s.counts(),
                resolver.ready(), candidates);
    }

    /** One candidate, named {@code host:port}; {@code null} (404) when it is none. */
    @ReadOperation
    public CandidateDetail candidate(@Selector String endpoint) {
        for (WorkerStatus status : resolver.pin().statuses()) {
            WorkerEndpoint e = status.endpoint();
            if (endpoint.equals(e.host() + ":" + e.port()) || endpoint.equals(e.url())) {
                WorkerInfo info = status.info().orElse(null);
                return new CandidateDetail(e.url(), status.state().name(), info == null ? null : info.version(),
                        status.reason(), info == null ? null : info.instanceId(), e.labels(),
                        info == null ? Map.of() : info.labels(),
                        info == null ? List.of() : info.services().stream().map(ServiceInfo::name).toList());
            }
        }
        return null;
    }

    private static Candidate candidate(WorkerStatus status) {
        return new Candidate(status.endpoint().url(), status.state().name(),
                status.info().map(WorkerInfo::version).orElse(null), status.reason());
    }

    /**
     * The fleet in one snapshot.
     *
     * @param snapshot         the snapshot's number
     * @param publishedAt      when it was published (ISO-8601)
     * @param policy           the policy's description
     * @param discovery        the backend's description
     * @param staleSince       since when discovery has been failing, or null while it is healthy
     * @param discoveryProblem why discovery is failing, or null
     * @param counts           how the candidates split up
     * @param readiness        {@code rollcall.readiness.*}'s verdict
     * @param candidates       every candidate, by URL
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Fleet(long snapshot, String publishedAt, String policy, String discovery, String staleSince,
                        String discoveryProblem, FleetCounts counts, Readiness readiness, List<Candidate> candidates)
            implements OperationResponseBody {
    }

    /**
     * One candidate in the list.
     *
     * @param endpoint its URL
     * @param state    {@code COMPATIBLE}, {@code REJECTED}, {@code UNREACHABLE}, {@code PENDING},
     *                 {@code DRAINING} or {@code NOT_SERVING}
     * @param version  what it reported, or null before it answered
     * @param reason   why it is not compatible, {@code ""} when it is
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Candidate(String endpoint, String state, String version, String reason) {
    }

    /**
     * One candidate in detail.
     *
     * @param endpoint       its URL
     * @param state          as in {@link Candidate}
     * @param version        what it reported, or null before it answered
     * @param reason         why it is not compatible, {@code ""} when it is
     * @param instanceId     its process start's id, or null before it answered
     * @param discoveryLabels the labels discovery gave it
     * @param labels         the labels it reported
     * @param services       the services it offers
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record CandidateDetail(String endpoint, String state, String version, String reason, String instanceId,
                                  Map<String, String> discoveryLabels, Map<String, String> labels,
                                  List<String> services) implements OperationResponseBody {
    }
}
