package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.arrow.flight.FlightProducer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * A {@link RollcallWorker} when {@code rollcall.worker.enabled=true}: the application's
 * {@link FlightProducer} bean (if it has one; of several, the {@code @Primary} one, else start-up
 * fails) and Rollcall's {@code WorkerInfo} on one gRPC port,
 * reporting {@code rollcall.worker.version}, with every other {@code rollcall.worker.*} key read and
 * checked by core as in {@code rollcall.properties}.
 *
 * <p>The worker binds its port when the bean is created, but says {@code NOT_SERVING} (coordinators
 * leave it out) until the context has started: it takes work only once the whole application
 * does. At shutdown it drains first, before the web server's graceful shutdown begins
 * ({@link RollcallWorkerLifecycle}), so a rolling restart fails no job.
 */
@AutoConfiguration(after = RollcallAutoConfiguration.class)
@ConditionalOnClass({RollcallWorker.class, FlightProducer.class})
@Conditional(RollcallSwitches.WorkerEnabled.class)
public class RollcallWorkerAutoConfiguration {

    /** The version key this starter adds to the worker's keys (default {@code ""}). */
    static final String VERSION = StarterKeys.WORKER_VERSION.name();

    /**
     * The started worker (not serving until the context has started).
     *
     * @throws dev.rollcall.api.ConfigurationException (failing start-up) naming the bad key
     * @throws UncheckedIOException when its port cannot be bound
     */
    @Bean
    @ConditionalOnMissingBean
    public RollcallWorker rollcallWorker(RollcallConfig rollcallConfig, ObjectProvider<FlightProducer> producer,
                                         ObjectProvider<RollcallWorkerCustomizer> customizers) {
        rollcallConfig.settings().raw(RollcallSwitches.WORKER_ENABLED); // a known key: not a typo
        String version = rollcallConfig.settings().string(VERSION, "");
        RollcallWorker.Builder builder = RollcallWorker.builder().config(rollcallConfig).version(version)
                .startNotServing();
        FlightProducer flight = producer.getIfUnique();
        if (flight == null && producer.stream().findAny().isPresent()) {
            throw new IllegalStateException("several FlightProducer beans and none @Primary: the Rollcall worker"
                    + " (rollcall.worker.enabled=true) serves one; mark it @Primary or customize the builder");
        }
        if (flight != null) {
            builder.flightProducer(flight);
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("the Rollcall worker could not bind its port (rollcall.worker.port)", e);
        }
    }

    /** Serving once the context has started, drained and closed before the web server stops. */
    @Bean
    public RollcallWorkerLifecycle rollcallWorkerLifecycle(RollcallWorker rollcallWorker) {
        return new RollcallWorkerLifecycle(rollcallWorker);
    }
}
