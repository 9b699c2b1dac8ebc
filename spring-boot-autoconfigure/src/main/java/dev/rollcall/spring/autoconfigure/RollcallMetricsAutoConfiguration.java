package dev.rollcall.spring.autoconfigure;

import dev.rollcall.core.RollcallMetrics;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The resolver's meters ({@code rollcall.workers}, {@code rollcall.probe.latency}, ... — see
 * {@link RollcallMetrics}) in the application's {@code MeterRegistry}: Spring Boot binds every
 * {@link MeterBinder} bean to each registry it configures, so no user code is needed.
 */
@AutoConfiguration(after = RollcallAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(WorkerResolver.class)
public class RollcallMetricsAutoConfiguration {

    /** The binder of the resolver's meters. */
    @Bean
    @ConditionalOnMissingBean
    public RollcallMetrics rollcallMetrics(WorkerResolver resolver) {
        return new RollcallMetrics(resolver);
    }
}
