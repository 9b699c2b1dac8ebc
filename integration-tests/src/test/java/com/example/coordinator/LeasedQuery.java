package com.example.coordinator;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.SnapshotLease;
import dev.rollcall.core.WorkerResolver;
import java.util.List;
import java.util.function.Function;

public final class LeasedQuery {

    /** One query under one lease: planned, run and finished on the workers of one snapshot. */
    static <R> R run(WorkerResolver resolver, Function<List<WorkerInfo>, R> planAndRun) {
        try (SnapshotLease lease = resolver.lease()) {      // rollcall.drain.exact=true: holds these workers
            FleetSnapshot snapshot = lease.snapshot();        // the same snapshot for the whole query
            return planAndRun.apply(snapshot.workers());      // sizing, routing, the last Flight stream
        }                                                     // closed: a draining worker may stop now
    }

    /** A coordinator that takes every snapshot under a lease may turn exact drain on. */
    static WorkerResolver exact(WorkerResolver.Builder builder) {
        return builder.exactDrain(true).build();          // or rollcall.drain.exact=true
    }
}
