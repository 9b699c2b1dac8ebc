package com.example.coordinator;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

public final class Coordinator {

    public static void main(String[] args) throws TimeoutException, InterruptedException {
        try (WorkerResolver resolver = WorkerResolver.fromConfig()) {   // rollcall.properties, -Drollcall.config
            resolver.addListener(s -> replan(s.workers()));             // follow changes, on the listener thread
            // Every candidate has a verdict (or the timeout says why not): one consistent view for the query.
            FleetSnapshot snapshot = resolver.awaitSettled(Duration.ofSeconds(10));
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
