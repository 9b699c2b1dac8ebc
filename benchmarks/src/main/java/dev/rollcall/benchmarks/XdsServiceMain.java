package dev.rollcall.benchmarks;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.server.FleetServer;
import dev.rollcall.testkit.PushDiscovery;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The service JVM of scenario 15's heap rows ({@link XdsControlPlane}), alone in its process so that
 * its heap is the service's: {@code XdsServiceMain <on|off>} runs one resolver with
 * {@code rollcall.probe.protocol=none} on a {@link PushDiscovery} of synthetic workers (each its own
 * loopback address, {@code 127.1.0.1} upward, port 9, its version from discovery's
 * {@code rollcall.version} label: nothing listens and nothing is dialled) and a {@link FleetServer} on
 * an ephemeral loopback port, HTTP off, every {@code rollcall.serve.*} key at its default but, with
 * {@code off}, {@code rollcall.serve.xds.enabled=false}. Prints {@code PORT <port>}, then answers on
 * standard input, one line each:
 * <ul>
 *   <li>{@code fleet <size>}: the fleet becomes the first {@code size} synthetic workers; answers
 *       {@code FLEET <snapshot number>} once all are compatible;</li>
 *   <li>{@code heap}: {@code HEAP <bytes>} used after full collections; {@code assignments}:
 *       {@code ASSIGNMENTS <n>}, the live {@code ClusterLoadAssignment} messages; {@code streams}:
 *       {@code STREAMS <n>}, the server's {@code rollcall.serve.xds.streams} gauge (-1 with xDS off).</li>
 * </ul>
 * Stops at the end of its input.
 */
public final class XdsServiceMain {

    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    static final String VERSION = "1.0.0";

    private XdsServiceMain() {
    }

    public static void main(String[] args) throws Exception {
        boolean xds = args[0].equals("on");
        PushDiscovery discovery = new PushDiscovery("push[xds-service]");
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (WorkerResolver resolver = WorkerResolver.builder().name("xds-service").discovery(discovery)
                .policy(VersionPolicy.rule(w -> w.version().equals(VERSION) ? Verdict.accept() : Verdict.reject("old")))
                .probeProtocol("none").maxCandidates(Plan.LARGE).build();
             FleetServer server = FleetServer.builder(resolver)
                     .config(RollcallConfig.of(Map.of("rollcall.serve.xds.enabled", String.valueOf(xds))))
                     .host("127.0.0.1").port(0).http(false).meterRegistry(meters).start()) {
            answer("PORT " + server.grpcAddress().getPort());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "fleet" -> {
                        int size = Integer.parseInt(w[1]);
                        discovery.push(synthetic(size));
                        long number = resolver.await(s -> s.counts().candidates() == size
                                && s.counts().compatible() == size, TIMEOUT).number();
                        answer("FLEET " + number);
                    }
                    case "heap" -> answer("HEAP " + Footprint.usedHeapAfterGc());
                    case "assignments" -> answer("ASSIGNMENTS " + liveInstances(ClusterLoadAssignment.class));
                    case "streams" -> {
                        Gauge streams = meters.find("rollcall.serve.xds.streams").gauge();
                        answer("STREAMS " + (streams == null ? -1 : Math.round(streams.value())));
                    }
                    default -> throw new IllegalArgumentException("unknown command " + line);
                }
            }
        }
        System.exit(0);
    }

    /**
     * Live instances of {@code type} in this JVM, from {@code jcmd <pid> GC.class_histogram} (which
     * collects first); -1 when jcmd cannot say.
     */
    static long liveInstances(Class<?> type) throws Exception {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                String.valueOf(ProcessHandle.current().pid()), "GC.class_histogram").redirectErrorStream(true).start();
        long count = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(jcmd.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                String[] f = line.trim().split("\\s+");
                if (f.length >= 4 && f[3].equals(type.getName())) {
                    count = Long.parseLong(f[1]);
                }
            }
        }
        return jcmd.waitFor() == 0 ? Math.max(0, count) : -1;
    }

    /** The first {@code size} synthetic workers, all of {@link #VERSION}. */
    static List<WorkerEndpoint> synthetic(int size) {
        List<WorkerEndpoint> fleet = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            fleet.add(WorkerEndpoint.of(AddressFleetMain.address(i), 9)
                    .withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, VERSION)));
        }
        return fleet;
    }

    private static void answer(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
