package dev.rollcall.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A Spring Boot worker application in a JVM of its own, configured by environment variables as a
 * container is ({@code ROLLCALL_WORKER_ENABLED}, {@code _VERSION}, {@code _DRAIN_QUIET}), is sent
 * SIGTERM, as a rolling restart does,
 * while a coordinator runs Arrow Flight jobs on it and on another worker: the worker drains in
 * Spring's shutdown before the web server's graceful shutdown begins, coordinators stop planning
 * onto it at once (by push), the jobs planned before still reach it, and no job fails.
 */
class SpringWorkerShutdownTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A Spring Boot JVM starting on a loaded 2-core machine: 10 s when quiet, 30 s seen under the suite. */
    private static final Duration START = Duration.ofMinutes(2);

    @AutoClose
    private final Closer closer = new Closer();

    /** A job: planned on snapshot {@code snapshot} for {@code target}; whether it got every row. */
    private record Job(long snapshot, WorkerEndpoint target, boolean served, String failure) {
    }

    /** Its output goes to a file: a pipe read while the process exits may lose the last lines. */
    private static Process startWorkerApp(Path log) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 24) {
            cmd.add("--sun-misc-unsafe-memory-access=allow");
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), SpringWorkerApp.class.getName(),
                "--server.port=0", "--server.address=127.0.0.1", "--spring.main.banner-mode=off",
                "--rollcall.resolver.enabled=false"));
        Files.createDirectories(log.getParent());
        Files.deleteIfExists(log);
        ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        // Environment variables, as a container sets them: Spring's relaxed form, core's names.
        builder.environment().put("ROLLCALL_WORKER_ENABLED", "true");
        builder.environment().put("ROLLCALL_WORKER_VERSION", "1.0.0-env");
        builder.environment().put("ROLLCALL_WORKER_DRAIN_QUIET", "1s");
        return builder.start();
    }

    private static List<String> lines(Path log) {
        try {
            return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void sigtermDrainsTheSpringWorkerBeforeTheWebServerStopsAndNoFlightJobFails() throws Exception {
        Path log = Path.of("target", "spring-worker-app.log").toAbsolutePath();
        Process app = startWorkerApp(log);
        closer.add(() -> {
            app.destroyForcibly();
            app.waitFor(10, TimeUnit.SECONDS);
        });
        await().atMost(START).until(() -> indexOf(lines(log), "SERVING ") >= 0 || !app.isAlive());
        assertThat(app.isAlive()).as("the worker application started; its output:%n%s", String.join("\n", lines(log)))
                .isTrue();
        List<String> started = lines(log);
        String line = started.get(indexOf(started, "SERVING "));
        WorkerEndpoint spring = WorkerEndpoint.parse(line.substring(line.indexOf("SERVING ") + 8).strip());

        BufferAllocator allocator = closer.add(new RootAllocator());
        RollcallWorker other = closer.add(RollcallWorker.builder().version("1.0.0")
                .flightProducer(new SpringWorkerApp.Numbers(allocator)).start());
        PushDiscovery discovery = new PushDiscovery();
        WorkerResolver resolver = closer.add(WorkerResolver.builder().discovery(discovery).policy(w -> Verdict.accept())
                .refreshInterval(Duration.ofHours(1)).fetchSchemas(false).build());
        discovery.push(List.of(spring, other.endpoint()));
        resolver.awaitWorkers(2, WAIT);
        assertThat(resolver.pin().version(spring.url())).as("ROLLCALL_WORKER_VERSION").contains("1.0.0-env");

        List<Job> jobs = new CopyOnWriteArrayList<>();
        Map<WorkerEndpoint, FlightClient> clients = new ConcurrentHashMap<>();
        AtomicLong next = new AtomicLong();
        ScheduledExecutorService planner = Executors.newSingleThreadScheduledExecutor(
                r -> new Thread(r, "spring-worker-planner"));
        closer.add(() -> clients.values().forEach(c -> {
            try {
                c.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        closer.add(planner::shutdownNow);
        // Every 5 ms a Flight job, planned on the snapshot current then, round robin over its workers.
        planner.scheduleWithFixedDelay(() -> {
            FleetSnapshot plan = resolver.pin();
            List<WorkerInfo> workers = plan.workers();
            if (workers.isEmpty()) {
                return;
            }
            WorkerEndpoint target = workers.get((int) (next.getAndIncrement() % workers.size())).endpoint();
            FlightClient client = clients.computeIfAbsent(target, t -> FlightClient.builder(allocator,
                    Location.forGrpcInsecure(t.host(), t.port())).build());
            long rows = 0;
            String failure = null;
            try (FlightStream stream = client.getStream(new Ticket(new byte[] {1}), CallOptions.timeout(20, TimeUnit.SECONDS))) {
                while (stream.next()) {
                    rows += stream.getRoot().getRowCount();
                }
            } catch (Exception e) {
                failure = e.toString();
            }
            jobs.add(new Job(plan.number(), target, rows == SpringWorkerApp.ROWS, failure));
        }, 0, 5, TimeUnit.MILLISECONDS);
        await().atMost(WAIT).until(() -> jobs.stream().filter(j -> j.target().equals(spring)).count() >= 20);

        app.destroy(); // SIGTERM
        FleetSnapshot out = resolver.await(s -> s.workers().stream().noneMatch(w -> w.endpoint().equals(spring)), WAIT);
        assertThat(out.status(spring.url()).orElseThrow().state()).as("told by push while it still serves")
                .isEqualTo(State.DRAINING);
        assertThat(app.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as("stopped by itself").isTrue();
        assertThat(app.exitValue()).as("ended by SIGTERM after Spring's shutdown, not killed").isEqualTo(143);
        long afterExit = jobs.size();
        await().atMost(WAIT).until(() -> jobs.size() >= afterExit + 20);
        planner.shutdown(); // not shutdownNow: an interrupt would fail the job in flight
        assertThat(planner.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

        assertThat(jobs).as("no job failed").allSatisfy(j -> assertThat(j.served()).as(j.toString()).isTrue());
        assertThat(jobs).filteredOn(j -> j.snapshot() >= out.number()).as("jobs planned from the drain on")
                .isNotEmpty().allSatisfy(j -> assertThat(j.target()).isEqualTo(other.endpoint()));
        List<String> output = lines(log);
        int drained = indexOf(output, "stopping with the application: draining");
        int graceful = indexOf(output, "Commencing graceful shutdown");
        assertThat(drained).as("the worker drained; output:%n%s", String.join("\n", output)).isNotNegative();
        assertThat(graceful).as("the web server shut down gracefully; output:%n%s", String.join("\n", output))
                .isNotNegative();
        assertThat(drained).as("the worker drained before the web server's graceful shutdown").isLessThan(graceful);
    }
}
