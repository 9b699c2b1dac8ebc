package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.nio.file.Path;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code rollcall.*} keys from the Spring {@code Environment} reach core as they are: a typo or a bad
 * value fails start-up with the error {@code rollcall.properties} gives; YAML lists, profiles and
 * command-line arguments work as Spring users expect; the starter's switches are checked the same way.
 */
class EnvironmentConfigurationTest {

    private static SpringApplicationBuilder app(String... properties) {
        return new SpringApplicationBuilder(TestApplication.class).web(WebApplicationType.NONE).properties(properties);
    }

    private static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    @Test
    void aTypoInAProfilesPropertiesFailsStartUpWithTheErrorOfTheSameRollcallProperties() throws Exception {
        Path file = Path.of(Objects.requireNonNull(getClass().getResource("/typo-rollcall.properties")).toURI());
        ConfigurationException plain = (ConfigurationException) org.assertj.core.api.Assertions.catchThrowable(
                () -> WorkerResolver.fromConfig(RollcallConfig.fromFile(file)).close());
        assertThat(plain).isNotNull();

        Throwable spring = rootCause(org.assertj.core.api.Assertions.catchThrowable(
                () -> app().profiles("typo").run().close()));
        assertThat(spring).isInstanceOf(ConfigurationException.class);
        ConfigurationException e = (ConfigurationException) spring;
        assertThat(e.getMessage()).startsWith("unknown Rollcall configuration key: rollcall.probe.timout (")
                .contains("application-typo.properties")
                .endsWith("did you mean rollcall.probe.timeout?");
        // The same error, naming another source: the file's path instead of Spring's property source.
        assertThat(e.getMessage().replaceAll(" \\(.*\\)", "")).isEqualTo(plain.getMessage().replaceAll(" \\(.*\\)", ""));
        assertThat(e.key()).isEqualTo(plain.key());

        FailureAnalysis report = new RollcallFailureAnalyzer().analyze(spring);
        assertThat(report).as("Spring Boot's start-up report").isNotNull();
        assertThat(report.getDescription()).isEqualTo(e.getMessage());
        assertThat(report.getAction()).contains("rollcall.probe.timout");
    }

    @Test
    void aBadValueFailsStartUpWithExactlyTheMessageCoreGives() {
        String[] keys = {"rollcall.discovery.type=static", "rollcall.discovery.static.endpoints=grpc://127.0.0.1:1",
                "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0.0", "rollcall.probe.timeout=2"};
        java.util.Map<String, String> map = new java.util.HashMap<>();
        for (String kv : keys) {
            map.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        Throwable plain = org.assertj.core.api.Assertions.catchThrowable(
                () -> WorkerResolver.fromConfig(RollcallConfig.of(map)).close());
        Throwable spring = rootCause(org.assertj.core.api.Assertions.catchThrowable(() -> app(keys).run().close()));
        assertThat(spring).isInstanceOf(ConfigurationException.class);
        // The same error, naming another source: Spring's property source instead of "programmatic".
        assertThat(plain.getMessage()).endsWith(" (from programmatic)");
        assertThat(spring.getMessage()).isEqualTo(plain.getMessage().replace(" (from programmatic)",
                " (from Spring property source 'defaultProperties')"));
        assertThat(spring.getMessage()).contains("rollcall.probe.timeout").contains("'2'");
    }

    @Test
    void aMisspeltPolicyKeyIsReportedWithTheNearestBeforeTheKeyItMissesIsReportedMissing() {
        Throwable spring = rootCause(org.assertj.core.api.Assertions.catchThrowable(() -> app(
                "rollcall.discovery.type=static", "rollcall.discovery.static.endpoints=grpc://127.0.0.1:1",
                "rollcall.policy.type=semver", "rollcall.policy.semver.rnage=^1.4").run().close()));
        assertThat(spring).isInstanceOf(ConfigurationException.class)
                .hasMessage("unknown Rollcall configuration key: rollcall.policy.semver.rnage (Spring property source"
                        + " 'defaultProperties'): did you mean rollcall.policy.semver.range?");
        assertThat(((ConfigurationException) spring).key()).isEqualTo("rollcall.policy.semver.rnage");
    }

    @Test
    void aBadValueNamesTheSpringPropertySourceItCameFrom() {
        Throwable spring = rootCause(org.assertj.core.api.Assertions.catchThrowable(() -> app(
                "rollcall.discovery.type=static", "rollcall.discovery.static.endpoints=grpc://127.0.0.1:1",
                "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.4")
                .run("--rollcall.probe.timeout=2 parsecs").close()));
        assertThat(spring).isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("rollcall.probe.timeout='2 parsecs': expected a duration greater than 0s")
                .hasMessageEndingWith("(from Spring property source 'commandLineArgs')");
    }

    @Test
    void yamlListsProfilesAndCommandLineArgumentsReachTheResolver() {
        try (ConfigurableApplicationContext context = app().profiles("yaml")
                .run("--rollcall.readiness.min-workers=0")) {
            WorkerResolver resolver = context.getBean(WorkerResolver.class);
            assertThat(resolver.discoveryDescription()).isEqualTo("static[2 endpoints]");
            assertThat(resolver.policy().description()).contains("^1.0.0");
            assertThat(resolver.ready().required()).as("the argument beats application-yaml.yml").isZero();
            RollcallConfig config = context.getBean(RollcallConfig.class);
            assertThat(config.values()).containsEntry("rollcall.probe.timeout", "3s")
                    .containsEntry("rollcall.discovery.static.endpoints", "grpc://127.0.0.1:1,grpc://127.0.0.1:2");
            assertThat(config.origin("rollcall.probe.timeout")).contains("application-yaml.yml");
        }
    }

    @Test
    void rollcallPropertiesAndTheFileOfDashDRollcallConfigStillApplyBelowTheSpringEnvironment() throws Exception {
        Path file = java.nio.file.Files.createTempFile("rollcall", ".properties");
        java.nio.file.Files.writeString(file, "rollcall.probe.timeout=7s\nrollcall.probe.concurrency=8\n");
        System.setProperty(RollcallConfig.CONFIG_PROPERTY, file.toString());
        try (ConfigurableApplicationContext context = app().profiles("yaml").run()) {
            RollcallConfig config = context.getBean(RollcallConfig.class);
            assertThat(config.values()).containsEntry("rollcall.probe.concurrency", "8")
                    .as("application-yaml.yml wins").containsEntry("rollcall.probe.timeout", "3s");
            assertThat(config.origin("rollcall.probe.concurrency")).isEqualTo(file.toString());
        } finally {
            System.clearProperty(RollcallConfig.CONFIG_PROPERTY);
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void withTheHealthIndicatorOffTheReadinessGroupDoesNotNameIt() {
        try (ConfigurableApplicationContext context = app().profiles("yaml")
                .run("--management.health.rollcall.enabled=false")) {
            assertThat(context.getBeansOfType(RollcallHealthIndicator.class)).isEmpty();
            assertThat(context.getEnvironment().getProperty("management.endpoint.health.group.readiness.include"))
                    .isNull();
        }
        try (ConfigurableApplicationContext context = app().profiles("yaml").run()) {
            assertThat(context.getBeansOfType(RollcallHealthIndicator.class)).hasSize(1);
            assertThat(context.getEnvironment().getProperty("management.endpoint.health.group.readiness.include"))
                    .isEqualTo("readinessState,rollcall");
        }
    }

    /** A backend and a policy of the application's own, through the builder. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnBackend {
        @org.springframework.context.annotation.Bean
        RollcallResolverCustomizer ownDiscoveryAndPolicy() {
            return b -> b.discovery(new dev.rollcall.testkit.PushDiscovery("own backend"))
                    .policy(w -> dev.rollcall.api.policy.Verdict.accept());
        }
    }

    @Test
    void aCustomizerBeanShapesTheResolverAndTheKeysStillApply() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(TestApplication.class,
                OwnBackend.class).web(WebApplicationType.NONE).properties("rollcall.readiness.min-workers=4").run()) {
            WorkerResolver resolver = context.getBean(WorkerResolver.class);
            assertThat(resolver.discoveryDescription()).as("no rollcall.discovery.type needed").contains("own backend");
            assertThat(resolver.ready().required()).isEqualTo(4);
        }
    }

    /** Two Flight services: which one the worker serves must be said, not guessed. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class TwoProducers {
        @org.springframework.context.annotation.Bean
        org.apache.arrow.flight.FlightProducer one() {
            return new org.apache.arrow.flight.NoOpFlightProducer();
        }

        @org.springframework.context.annotation.Bean
        org.apache.arrow.flight.FlightProducer two() {
            return new org.apache.arrow.flight.NoOpFlightProducer();
        }
    }

    @Test
    void aWorkerWithTwoFlightProducerBeansAndNonePrimaryFailsStartUp() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(TestApplication.class, TwoProducers.class)
                .web(WebApplicationType.NONE)
                .properties("rollcall.resolver.enabled=false", "rollcall.worker.enabled=true").run().close())
                .satisfies(t -> assertThat(rootCause(t)).hasMessageContaining("several FlightProducer beans"));
    }

    @Test
    void theStartersSwitchesTurnTheResolverOffAndTheWorkerOnWithCoresChecks() {
        try (ConfigurableApplicationContext context = app("rollcall.resolver.enabled=false",
                "rollcall.worker.enabled=true", "rollcall.worker.version=1.2.3").run()) {
            assertThat(context.getBeansOfType(WorkerResolver.class)).as("no discovery type needed").isEmpty();
            RollcallWorker worker = context.getBean(RollcallWorker.class);
            assertThat(worker.version()).isEqualTo("1.2.3");
            assertThat(worker.state()).as("serving once the context has started").hasToString("SERVING");
        }
        assertThatThrownBy(() -> app("rollcall.worker.enabled=yes").run().close())
                .satisfies(t -> assertThat(rootCause(t)).isInstanceOf(ConfigurationException.class)
                        .hasMessageContaining("rollcall.worker.enabled").hasMessageContaining("true or false"));
        assertThatThrownBy(() -> app("rollcall.resolver.enabled=false", "rollcall.worker.enabled=true",
                "rollcall.worker.prot=7001").run().close())
                .satisfies(t -> assertThat(rootCause(t)).isInstanceOf(ConfigurationException.class)
                        .hasMessageContaining("rollcall.worker.prot").hasMessageContaining("did you mean rollcall.worker.port?"));
    }
}
