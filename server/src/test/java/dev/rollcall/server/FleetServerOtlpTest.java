package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.otlp.OtlpReceiver;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code rollcall serve}'s meters pushed over OTLP/HTTP when {@code rollcall.metrics.otlp.url} is
 * set, to testkit's receiver stand-in (a JDK HTTP server on loopback decoding the protobuf payload).
 */
class FleetServerOtlpTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    final Closer closer = new Closer();

    @Test
    void withAnOtlpUrlTheResolversAndTheServersMetersArePushedOnAResourceNamingThisServer() throws Exception {
        OtlpReceiver receiver = closer.add(OtlpReceiver.start());
        WorkerFleet fleet = closer.add(WorkerFleet.start("1.4.0", "1.4.0", "2.0.0"));
        RollcallConfig config = RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", fleet.endpointList(),
                "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.4",
                "rollcall.serve.port", "0",
                "rollcall.serve.http-port", "0",
                "rollcall.metrics.otlp.url", receiver.url(),
                "rollcall.metrics.otlp.step", "1s"));
        WorkerResolver resolver = closer.add(WorkerResolver.fromConfig(config));
        FleetServer server = closer.add(FleetServer.builder(resolver).config(config).start());

        // An export may fall between the resolver's binding and the server's own: wait for one with both.
        await().atMost(WAIT).until(() -> receiver.latestGauge("rollcall.workers", Map.of("state", "compatible"))
                .map(p -> p.value() == 2.0).orElse(false)
                && receiver.latestGauge("rollcall.workers.versions", Map.of("version", "2.0.0")).isPresent()
                && receiver.latestGauge("rollcall.serve.watchers", Map.of()).isPresent());
        OtlpReceiver.GaugePoint compatible =
                receiver.latestGauge("rollcall.workers", Map.of("state", "compatible")).orElseThrow();
        assertThat(compatible.resource()).containsEntry("service.name", "rollcall-serve")
                .containsEntry("service.instance.id", server.instanceId())
                .containsKey("service.version");
        assertThat(compatible.resource().get("service.version")).isNotBlank().doesNotContain("${");
        assertThat(receiver.latestGauge("rollcall.workers.versions", Map.of("version", "1.4.0")).orElseThrow()
                .value()).isEqualTo(2.0);
        assertThat(receiver.latestGauge("rollcall.serve.watchers", Map.of()).orElseThrow().resource())
                .containsEntry("service.instance.id", server.instanceId());
    }
}
