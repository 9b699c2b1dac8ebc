package dev.rollcall.spring.autoconfigure;

import dev.rollcall.core.WorkerResolver;

/**
 * Changes the {@link WorkerResolver.Builder} of the auto-configured resolver before it is built:
 * a discovery backend or policy of your own, a clock, a selector. Every bean of this type is
 * applied, in {@link org.springframework.core.annotation.Order} order, after the {@code rollcall.*}
 * configuration is set (so values set here win). Called once, on the thread that creates the bean.
 */
@FunctionalInterface
public interface RollcallResolverCustomizer {

    /** Adjusts {@code builder}; must not call {@code build()}. */
    void customize(WorkerResolver.Builder builder);
}
