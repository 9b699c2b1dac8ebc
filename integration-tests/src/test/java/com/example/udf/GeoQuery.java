package com.example.udf;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import java.util.List;
import java.util.Optional;

public final class GeoQuery {

    static final Requirements NEEDS_GEO = Requirements.of("udf:geo_distance");

    /** One fragment of a query, run on one worker (a Flight call, your engine's own RPC). */
    public interface Fragment {
        void run(WorkerInfo worker, long snapshot) throws Exception;
    }

    /** What a query did: the snapshot it planned on and the workers it ran on, or why it ran nowhere. */
    public record Outcome(long snapshot, List<WorkerInfo> ranOn, Optional<String> notRun) {
    }

    /** Plans a query over exactly the workers that meet {@code needs}, and runs a fragment on each. */
    static Outcome run(WorkerResolver resolver, Requirements needs, Fragment fragment) throws Exception {
        try (SnapshotLease lease = resolver.lease(needs)) {        // Requirements.none(): every compatible worker
            FleetSnapshot snapshot = lease.snapshot();               // the fleet's snapshot, narrowed to `needs`
            if (snapshot.workers().isEmpty()) {
                return new Outcome(snapshot.number(), List.of(), Optional.of(whyNowhere(snapshot)));
            }
            for (WorkerInfo worker : snapshot.workers()) {
                fragment.run(worker, snapshot.number());
            }
            return new Outcome(snapshot.number(), snapshot.workers(), Optional.empty());
        }
    }

    /** E.g. "no worker meets udf:geo_distance; 3 compatible workers lack it (grpc://...: lacks udf:geo_distance, ...)". */
    static String whyNowhere(FleetSnapshot snapshot) {
        List<String> lacking = snapshot.statuses().stream()
                .filter(s -> s.state() == WorkerStatus.State.LACKS_REQUIREMENT)
                .map(s -> s.endpoint().url() + ": " + s.reason())   // the reason names what the worker lacks
                .toList();
        return "no worker meets " + snapshot.requirements() + "; " + lacking.size()
                + " compatible workers lack it (" + String.join(", ", lacking) + ")";
    }
}
