package com.example.otlp;

import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.worker.WorkerMetrics;
import io.micrometer.core.instrument.Clock;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import java.util.Map;

/** A worker whose own meters go to an OpenTelemetry collector (docs/metrics.md). */
public final class OtlpWorker {

    public static void main(String[] args) throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.4.0").port(7001).start();
        OtlpMeterRegistry otlp = new OtlpMeterRegistry(new OtlpConfig() {
            @Override
            public String get(String key) {
                return null; // Micrometer's defaults: a one-minute step
            }

            @Override
            public String url() {
                return "http://127.0.0.1:4318/v1/metrics";
            }

            @Override
            public Map<String, String> resourceAttributes() {
                return Map.of("service.name", "my-engine-worker", "service.version", worker.version(),
                        "service.instance.id", worker.instanceId());
            }
        }, Clock.SYSTEM);
        new WorkerMetrics(worker).bindTo(otlp);
        try {
            worker.awaitTermination(); // until something closes the worker
        } finally {
            worker.close(); // drains first
            otlp.close();   // exports once more: the last export says draining
        }
    }
}
