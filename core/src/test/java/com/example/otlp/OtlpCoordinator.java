package com.example.otlp;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.OtlpMetrics;
import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.UUID;

/** A coordinator whose resolver's meters go to an OpenTelemetry collector (docs/metrics.md). */
public final class OtlpCoordinator {

    public static void main(String[] args) throws Exception {
        // rollcall.properties: rollcall.metrics.otlp.url=http://127.0.0.1:4318/v1/metrics (and the resolver's keys)
        RollcallConfig config = RollcallConfig.load();
        try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
             RollcallMetrics metrics = new RollcallMetrics(resolver)) {
            Optional<MeterRegistry> otlp = OtlpMetrics.start(config,
                    "my-coordinator", "3.2.1", UUID.randomUUID().toString()); // service.name, .version, .instance.id
            otlp.ifPresent(metrics::bindTo);
            try {
                // ... plan and run queries on resolver.workers() ...
            } finally {
                otlp.ifPresent(MeterRegistry::close); // exports once more, then stops
            }
        }
    }
}
