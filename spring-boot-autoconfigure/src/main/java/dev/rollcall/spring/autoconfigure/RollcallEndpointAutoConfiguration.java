package dev.rollcall.spring.autoconfigure;

import dev.rollcall.core.WorkerResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rollcall} actuator endpoint ({@link RollcallEndpoint}), when it is available: exposed
 * like any endpoint ({@code management.endpoints.web.exposure.include=health,rollcall}); it shows
 * the fleet's addresses and versions, so expose it where the health endpoint is not public.
 */
@AutoConfiguration(after = RollcallAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(WorkerResolver.class)
@ConditionalOnAvailableEndpoint(RollcallEndpoint.class)
public class RollcallEndpointAutoConfiguration {

    /** {@code /actuator/rollcall} and {@code /actuator/rollcall/{endpoint}}. */
    @Bean
    @ConditionalOnMissingBean
    public RollcallEndpoint rollcallEndpoint(WorkerResolver resolver) {
        return new RollcallEndpoint(resolver);
    }
}
