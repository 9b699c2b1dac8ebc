package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.server.FleetServer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code rollcall.serve.enabled=true} makes a Spring Boot coordinator serve its resolver's fleet to
 * coordinators in any language: a real gRPC client on a real port gets the fleet the resolver bean
 * sees; the server's meters are in the application's registry; its own HTTP port stays off (the
 * actuator has readiness and Prometheus); it closes before the resolver. Without the switch no
 * server exists and no port is bound; with it but without {@code rollcall-server}, or without a
 * resolver to serve, start-up fails saying so.
 */
class ServeFleetOptInTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static WorkerFleet fleet;

    @BeforeAll
    static void startFleet() {
        fleet = WorkerFleet.start("1.0.0", "1.0.0", "2.0.0");
    }

    @AfterAll
    static void stopFleet() {
        fleet.close();
    }

    private static SpringApplicationBuilder app(Class<?>[] sources, String... properties) {
        return new SpringApplicationBuilder(sources).web(WebApplicationType.NONE)
                .properties("rollcall.discovery.type=static", "rollcall.discovery.static.endpoints=" + fleet.endpointList(),
                        "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.0.0")
                .properties(properties);
    }

    @Test
    void withTheSwitchAGrpcClientGetsTheFleetTheResolverBeanSees() throws Exception {
        try (ConfigurableApplicationContext context = app(new Class<?>[] {TestApplication.class},
                "rollcall.serve.enabled=true", "rollcall.serve.port=0").run()) {
            FleetServer server = context.getBean(FleetServer.class);
            WorkerResolver resolver = context.getBean(WorkerResolver.class);
            resolver.await(s -> s.counts().pending() == 0 && s.counts().compatible() == 2, WAIT);

            ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.grpcAddress().getPort())
                    .usePlaintext().build();
            try {
                FleetSnapshot fleetSeen = FleetServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .getFleet(GetFleetRequest.getDefaultInstance());
                assertThat(fleetSeen.getWorkersList()).extracting(FleetWorker::getUrl)
                        .containsExactlyInAnyOrder(fleet.worker(0).endpoint().url(), fleet.worker(1).endpoint().url());
                assertThat(fleetSeen.getExcludedList()).singleElement().satisfies(w -> {
                    assertThat(w.getUrl()).isEqualTo(fleet.worker(2).endpoint().url());
                    assertThat(w.getVersion()).isEqualTo("2.0.0");
                    assertThat(w.getReason()).contains("^1.0.0");
                });
                assertThat(fleetSeen.getServiceInstanceId()).isEqualTo(server.instanceId());
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            assertThat(server.httpAddress()).as("the actuator serves readiness and metrics: no second HTTP port")
                    .isEmpty();
            assertThat(context.getBean(MeterRegistry.class).find("rollcall.serve.watchers").gauge())
                    .as("the server's meters in the application's registry").isNotNull();
        }
    }

    @Test
    void theServerClosesBeforeTheResolverItServes() {
        ShutdownOrder.destroyed.clear();
        ConfigurableApplicationContext context = app(new Class<?>[] {TestApplication.class, ShutdownOrder.class},
                "rollcall.serve.enabled=true", "rollcall.serve.port=0").run();
        FleetServer server = context.getBean(FleetServer.class);
        int port = server.grpcAddress().getPort();

        context.close();

        assertThat(ShutdownOrder.destroyed).containsExactly(FleetServer.class.getSimpleName(),
                WorkerResolver.class.getSimpleName());
        assertThat(bindable(port)).as("the gRPC port is free again").isTrue();
    }

    @Test
    void withoutTheSwitchThereIsNoServerAndNoPortIsBound() throws Exception {
        int port = freePort();
        try (ConfigurableApplicationContext context = app(new Class<?>[] {TestApplication.class},
                "rollcall.serve.port=" + port).run()) {
            context.getBean(WorkerResolver.class).await(s -> s.counts().pending() == 0, WAIT);
            assertThat(context.getBeansOfType(FleetServer.class)).isEmpty();
            assertThat(bindable(port)).as("nothing listens on rollcall.serve.port").isTrue();
        }
    }

    @Test
    void theSwitchWithoutRollcallServerOnTheClassPathFailsStartUpNamingBoth() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RollcallAutoConfiguration.class,
                        RollcallServerAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(FleetServer.class))
                .withPropertyValues("rollcall.serve.enabled=true", "rollcall.discovery.type=static",
                        "rollcall.discovery.static.endpoints=" + fleet.endpointList())
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).isNotNull();
                    Throwable root = failure;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    assertThat(root).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("rollcall.serve.enabled=true").hasMessageContaining("rollcall-server");
                });
    }

    @Test
    void theSwitchWithTheResolverTurnedOffFailsStartUpNamingBothSwitches() {
        Throwable failure = catchThrowable(() -> app(new Class<?>[] {TestApplication.class},
                "rollcall.serve.enabled=true", "rollcall.resolver.enabled=false").run().close());
        Throwable root = failure;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        assertThat(root).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rollcall.serve.enabled=true").hasMessageContaining("rollcall.resolver.enabled=false");
    }

    @Test
    void aSwitchThatIsNotABooleanFailsStartUpNamingTheKey() {
        Throwable failure = catchThrowable(() -> app(new Class<?>[] {TestApplication.class},
                "rollcall.serve.enabled=yes").run().close());
        Throwable root = failure;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        assertThat(root).hasMessageContaining("rollcall.serve.enabled").hasMessageContaining("yes");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Records, in order, which of the server and the resolver the context destroys. */
    @Configuration(proxyBeanMethods = false)
    static class ShutdownOrder {
        static final List<String> destroyed = new CopyOnWriteArrayList<>();

        @Bean
        static DestructionAwareBeanPostProcessor rollcallShutdownOrder() {
            return (bean, name) -> {
                if (bean instanceof FleetServer || bean instanceof WorkerResolver) {
                    destroyed.add(bean.getClass().getSimpleName());
                }
            };
        }
    }
}
