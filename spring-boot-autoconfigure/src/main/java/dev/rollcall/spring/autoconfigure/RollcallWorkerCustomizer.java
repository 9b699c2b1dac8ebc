package dev.rollcall.spring.autoconfigure;

import dev.rollcall.worker.RollcallWorker;

/**
 * Changes the {@link RollcallWorker.Builder} of the auto-configured worker
 * ({@code rollcall.worker.enabled=true}) before it starts: your own gRPC services, labels,
 * interceptors, an allocator. Every bean of this type is applied, in
 * {@link org.springframework.core.annotation.Order} order, after the configuration, the version and
 * the {@code FlightProducer} bean are set. Called once, on the thread that creates the bean.
 */
@FunctionalInterface
public interface RollcallWorkerCustomizer {

    /** Adjusts {@code builder}; must not call {@code start()}. */
    void customize(RollcallWorker.Builder builder);
}
