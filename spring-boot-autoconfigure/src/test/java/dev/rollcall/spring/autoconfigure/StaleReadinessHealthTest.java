package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code rollcall.readiness.max-stale} reaches the {@code rollcall} health: a coordinator under
 * {@code none} whose registry has been failing for longer than the bound is {@code OUT_OF_SERVICE},
 * saying for how long and naming the key, and {@code UP} again once the registry answers.
 */
class StaleReadinessHealthTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final PushDiscovery REGISTRY = new PushDiscovery("a registry the test fails");
    private static final MovingClock CLOCK = new MovingClock(Instant.parse("2026-12-07T06:00:00Z"));

    /** A clock the test moves; read from any thread. */
    private static final class MovingClock extends Clock {
        private volatile Instant now;

        MovingClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class RegistryAndClock {
        @Bean
        RollcallResolverCustomizer registryAndClock() {
            return b -> b.discovery(REGISTRY).policy(w -> Verdict.accept()).clock(CLOCK);
        }
    }

    @Test
    void aRegistryFailingLongerThanMaxStaleTakesTheCoordinatorOutOfServiceUntilItAnswers() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(TestApplication.class,
                RegistryAndClock.class).web(WebApplicationType.NONE)
                .properties("rollcall.probe.protocol=none", "rollcall.readiness.max-stale=1m").run()) {
            WorkerResolver resolver = context.getBean(WorkerResolver.class);
            RollcallHealthIndicator health = context.getBean(RollcallHealthIndicator.class);
            WorkerEndpoint claimed = WorkerEndpoint.of("127.0.0.1", 7001)
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"));
            REGISTRY.push(List.of(claimed));
            resolver.awaitWorkers(1, WAIT);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);

            REGISTRY.fail(new IllegalStateException("registry unreachable"));
            resolver.await(s -> s.staleSince().isPresent(), WAIT);
            CLOCK.advance(Duration.ofMinutes(2));
            Health stale = health.health();
            assertThat(stale.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat((String) stale.getDetails().get("reason")).startsWith("discovery stale for 2m")
                    .contains("rollcall.readiness.max-stale (1m)").contains("registry unreachable");

            REGISTRY.push(List.of(claimed));
            resolver.await(s -> s.staleSince().isEmpty(), WAIT);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        }
    }
}
