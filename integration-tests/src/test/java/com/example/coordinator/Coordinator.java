package com.example.coordinator;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.core.WorkersUnavailableException;
import java.time.Duration;
import java.util.List;

public final class Coordinator {

    public static void main(String[] args) throws WorkersUnavailableException, InterruptedException {
        try (WorkerResolver resolver = WorkerResolver.fromConfig()) {   // rollcall.properties, -Drollcall.config
            resolver.addListener(s -> replan(s.workers()));             // follow changes, on the listener thread
            resolver.awaitWorkers(1, Duration.ofSeconds(10));           // fails with counts if none turn up
            FleetSnapshot snapshot = resolver.pin();                    // one consistent view for the whole query
            for (WorkerInfo worker : snapshot.workers()) {              // compatible workers only
                schedule(worker.endpoint().host(), worker.endpoint().port(), worker.version());
            }
        }
    }

    static void schedule(String host, int port, String version) {
        System.out.println("scheduling on " + host + ":" + port + " (" + version + ")");
    }

    static void replan(List<WorkerInfo> workers) {
        System.out.println("replanning over " + workers.size() + " workers");
    }
}
