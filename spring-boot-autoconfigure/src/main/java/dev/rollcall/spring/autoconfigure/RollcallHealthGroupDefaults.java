package dev.rollcall.spring.autoconfigure;

import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Puts the {@code rollcall} health indicator in the {@code readiness} health group by default,
 * below every other property source, so that any setting of the application's wins:
 * {@code management.endpoint.health.group.readiness.include=readinessState,rollcall} and
 * {@code management.health.readinessstate.enabled=true} (so that {@code readinessState} exists
 * whether or not probes are enabled). An application that sets its own readiness group adds
 * {@code rollcall} to it itself. Nothing is added when {@code rollcall.resolver.enabled=false} or the
 * indicator is off ({@code management.health.rollcall.enabled=false}).
 */
public final class RollcallHealthGroupDefaults implements EnvironmentPostProcessor {

    static final String SOURCE = "rollcallHealthGroupDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        // Only when the indicator will exist: Spring Boot fails start-up on a group naming a missing one.
        String healthDefault = environment.getProperty("management.health.defaults.enabled", "true");
        boolean health = !"false".equalsIgnoreCase(
                environment.getProperty("management.health.rollcall.enabled", healthDefault).strip());
        if (health && !"false".equalsIgnoreCase(environment.getProperty(RollcallSwitches.RESOLVER_ENABLED, "true").strip())) {
            environment.getPropertySources().addLast(new MapPropertySource(SOURCE, Map.of(
                    "management.endpoint.health.group.readiness.include", "readinessState,rollcall",
                    "management.health.readinessstate.enabled", "true")));
        }
    }
}
