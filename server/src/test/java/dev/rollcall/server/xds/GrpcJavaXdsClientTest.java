package dev.rollcall.server.xds;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.worker.RollcallWorker;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GrpcJavaXdsClientTest {

    @Test
    void grpcJavaXdsChannelCallsOnlyCompatibleWorkers() throws Exception {
        PushDiscovery discovery = new PushDiscovery("xds-grpc-java");
        try (RollcallWorker a = RollcallWorker.builder().version("1.0.0").start();
             RollcallWorker b = RollcallWorker.builder().version("1.1.0").start();
             RollcallWorker c = RollcallWorker.builder().version("2.0.0").start()) {
            discovery.push(List.of(a.endpoint(), b.endpoint(), c.endpoint()));
            try (WorkerResolver resolver = WorkerResolver.builder().name("xds").discovery(discovery)
                    .policy(w -> w.version().startsWith("1.") ? Verdict.accept() : Verdict.reject("not 1.x"))
                    .fetchSchemas(false).build();
                 FleetServer server = FleetServer.builder(resolver).config(RollcallConfig.of(Map.of()))
                         .port(0).http(false).start()) {
                resolver.awaitWorkers(2, Duration.ofSeconds(20));
                try (GrpcXdsClient client = GrpcXdsClient.dial(server.grpcAddress().getPort(), "fleet")) {
                    Set<String> versions = new HashSet<>();
                    for (int i = 0; i < 40; i++) {
                        versions.add(client.call().getVersion());
                    }
                    assertThat(versions).containsExactlyInAnyOrder("1.0.0", "1.1.0");
                }
            }
        }
    }
}
