package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.Settings;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * The starter's own on/off keys, {@code rollcall.resolver.enabled} (default true),
 * {@code rollcall.worker.enabled} and {@code rollcall.serve.enabled} (default false), read with core's rules: a value other than
 * {@code true} or {@code false} fails start-up naming the key, as every Rollcall key does, instead
 * of turning the feature off silently as a plain property condition would.
 */
final class RollcallSwitches {

    static final String RESOLVER_ENABLED = StarterKeys.RESOLVER_ENABLED.name();
    static final String WORKER_ENABLED = StarterKeys.WORKER_ENABLED.name();
    static final String SERVE_ENABLED = StarterKeys.SERVE_ENABLED.name();

    private RollcallSwitches() {
    }

    static boolean resolverEnabled(Environment environment) {
        return read(environment, RESOLVER_ENABLED, StarterKeys.RESOLVER_ENABLED.defaultValue());
    }

    static boolean workerEnabled(Environment environment) {
        return read(environment, WORKER_ENABLED, StarterKeys.WORKER_ENABLED.defaultValue());
    }

    static boolean serveEnabled(Environment environment) {
        return read(environment, SERVE_ENABLED, StarterKeys.SERVE_ENABLED.defaultValue());
    }

    private static boolean read(Environment environment, String key, boolean byDefault) {
        Map<String, String> one = new HashMap<>();
        String value = environment.getProperty(key);
        if (value != null) {
            one.put(key, value);
        }
        return Settings.of(one).bool(key, byDefault);
    }

    /** Matches when {@code rollcall.resolver.enabled} is true (the default). */
    static final class ResolverEnabled extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return resolverEnabled(context.getEnvironment()) ? ConditionOutcome.match(RESOLVER_ENABLED + " is true")
                    : ConditionOutcome.noMatch(RESOLVER_ENABLED + " is false");
        }
    }

    /** Matches when {@code rollcall.worker.enabled} is true (default false). */
    static final class WorkerEnabled extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return workerEnabled(context.getEnvironment()) ? ConditionOutcome.match(WORKER_ENABLED + " is true")
                    : ConditionOutcome.noMatch(WORKER_ENABLED + " is false");
        }
    }

    /**
     * Matches when {@code rollcall.serve.enabled} is true (default false); true without
     * {@code rollcall-server} on the class path fails start-up naming both, rather than serving nothing.
     */
    static final class ServeEnabled extends SpringBootCondition {
        static final String SERVER_CLASS = "dev.rollcall.server.FleetServer";

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            if (!serveEnabled(context.getEnvironment())) {
                return ConditionOutcome.noMatch(SERVE_ENABLED + " is false");
            }
            if (!ClassUtils.isPresent(SERVER_CLASS, context.getClassLoader())) {
                throw new IllegalStateException(SERVE_ENABLED + "=true, but the application has no rollcall-server"
                        + " (dev.rollcall:rollcall-server) on its class path: add it, or set " + SERVE_ENABLED + "=false");
            }
            return ConditionOutcome.match(SERVE_ENABLED + " is true");
        }
    }
}
