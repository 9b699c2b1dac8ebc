package dev.rollcall.spring.autoconfigure;

import dev.rollcall.core.WorkerResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rollcall} health indicator ({@link RollcallHealthIndicator}): OUT_OF_SERVICE until
 * {@code resolver.ready()}, in the {@code readiness} group by default
 * ({@link RollcallHealthGroupDefaults}). Off with {@code management.health.rollcall.enabled=false}.
 */
@AutoConfiguration(after = RollcallAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(WorkerResolver.class)
@ConditionalOnEnabledHealthIndicator("rollcall")
public class RollcallHealthAutoConfiguration {

    /** Named {@code rollcall} in {@code /actuator/health}. */
    @Bean
    @ConditionalOnMissingBean(name = "rollcallHealthIndicator")
    public RollcallHealthIndicator rollcallHealthIndicator(WorkerResolver resolver) {
        return new RollcallHealthIndicator(resolver);
    }
}
