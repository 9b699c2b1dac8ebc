package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * A {@link WorkerResolver} for a Spring Boot application: its {@code rollcall.*} keys come from the
 * Spring {@code Environment} (see {@link #rollcallConfig}), the backend and the policy from what is
 * on the class path, as without Spring. The resolver is built, and so started, when the bean is
 * created, so that a bad key fails start-up and any bean may use it from its constructor on; it is
 * closed when the context closes, after every lifecycle phase has stopped (the web server's
 * graceful shutdown included), so requests in flight keep it to the end.
 *
 * <p>With it, when the application has their parts: the {@code rollcall} health indicator
 * ({@link RollcallHealthAutoConfiguration}), the {@code rollcall} actuator endpoint
 * ({@link RollcallEndpointAutoConfiguration}) and the resolver's meters
 * ({@link RollcallMetricsAutoConfiguration}). {@code rollcall.resolver.enabled=false} turns all of it
 * off (a worker-only application); {@link RollcallWorkerAutoConfiguration} is the worker side.
 */
@AutoConfiguration
public class RollcallAutoConfiguration {

    /**
     * Rollcall's configuration from the Spring {@code Environment}: every {@code rollcall.*} key,
     * on top of {@code rollcall.properties} and the rest of {@link RollcallConfig#load()}. Shared by
     * the resolver and the worker; define a bean of this type to replace it.
     */
    @Bean
    @ConditionalOnMissingBean
    public RollcallConfig rollcallConfig(ConfigurableEnvironment environment) {
        return SpringRollcallConfig.from(environment);
    }

    /**
     * The resolver, built from {@link #rollcallConfig} and every {@link RollcallResolverCustomizer}.
     *
     * @throws dev.rollcall.api.ConfigurationException (failing start-up) naming the bad key and value,
     *         or the nearest known key of an unknown one
     */
    @Bean
    @ConditionalOnMissingBean
    @Conditional(RollcallSwitches.ResolverEnabled.class)
    public WorkerResolver workerResolver(RollcallConfig rollcallConfig, ConfigurableEnvironment environment,
                                         ObjectProvider<RollcallResolverCustomizer> customizers) {
        rollcallConfig.settings().raw(RollcallSwitches.RESOLVER_ENABLED); // a known key: not a typo
        WorkerResolver.Builder builder = WorkerResolver.builder().config(rollcallConfig)
                .name(environment.getProperty("spring.application.name", "rollcall"));
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }
}
