package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.server.ServerKeys;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * What {@code rollcall serve} runs, inside a Spring Boot coordinator, when
 * {@code rollcall.serve.enabled=true}: a {@link FleetServer} over the {@link WorkerResolver} bean, so
 * that coordinators in other languages follow the fleet this application resolves
 * ({@code rollcall.v1.FleetService} on {@code rollcall.serve.port}), configured by the same
 * {@code rollcall.*} keys of the Spring {@code Environment} as the resolver.
 *
 * <p>The server's HTTP port ({@code /readyz}, {@code /healthz}, {@code /metrics}, the console) stays
 * off unless {@code rollcall.serve.http-port} is set: the actuator already serves readiness and
 * Prometheus. The server's meters go to the application's {@code MeterRegistry} when it has one.
 * The server binds its port when the bean is created (a port in use fails start-up) and is closed
 * when the context closes, before the resolver it serves (it depends on that bean), so every watch
 * and hold ends while the resolver still runs. With the switch but no resolver bean
 * ({@code rollcall.resolver.enabled=false} and none of the application's) start-up fails naming both
 * keys, rather than serving nothing.
 */
@AutoConfiguration(after = RollcallAutoConfiguration.class)
@Conditional({RollcallSwitches.ServeEnabled.class, RollcallServerAutoConfiguration.ResolverToServe.class})
public class RollcallServerAutoConfiguration {

    /**
     * The started server.
     *
     * @throws dev.rollcall.api.ConfigurationException (failing start-up) naming a bad {@code rollcall.serve.*} key
     * @throws UncheckedIOException when a port cannot be bound
     */
    @Bean
    @ConditionalOnMissingBean
    public FleetServer rollcallFleetServer(WorkerResolver workerResolver, RollcallConfig rollcallConfig,
                                           ObjectProvider<MeterRegistry> meterRegistry) {
        rollcallConfig.settings().raw(RollcallSwitches.SERVE_ENABLED); // a known key: not a typo
        boolean http = rollcallConfig.settings().find(ServerKeys.HTTP_PORT).isPresent();
        FleetServer.Builder builder = FleetServer.builder(workerResolver).config(rollcallConfig).http(http);
        MeterRegistry registry = meterRegistry.getIfUnique();
        if (registry != null) {
            builder.meterRegistry(registry);
        }
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("the Rollcall fleet server could not bind its port ("
                    + ServerKeys.PORT.name() + (http ? " or " + ServerKeys.HTTP_PORT.name() : "") + ")", e);
        }
    }

    /**
     * With {@code rollcall.serve.enabled=true}, once the resolver's bean definition would have been
     * registered: a resolver to serve, or start-up fails naming the switches.
     */
    static final class ResolverToServe extends SpringBootCondition implements ConfigurationCondition {
        @Override
        public ConfigurationPhase getConfigurationPhase() {
            return ConfigurationPhase.REGISTER_BEAN;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            if (!RollcallSwitches.serveEnabled(context.getEnvironment())) {
                return ConditionOutcome.noMatch(RollcallSwitches.SERVE_ENABLED + " is false");
            }
            if (context.getBeanFactory() == null
                    || context.getBeanFactory().getBeanNamesForType(WorkerResolver.class, true, false).length == 0) {
                throw new IllegalStateException(RollcallSwitches.SERVE_ENABLED + "=true serves the WorkerResolver bean,"
                        + " but the application has none: " + RollcallSwitches.RESOLVER_ENABLED + "=false turned it off"
                        + " and no bean of the application's replaces it");
            }
            return ConditionOutcome.match("a WorkerResolver bean to serve");
        }
    }
}
