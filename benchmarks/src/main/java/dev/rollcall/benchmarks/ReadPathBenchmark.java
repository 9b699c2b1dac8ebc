package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Scenario 1, the read path: what a coordinator pays each time it asks for the compatible workers,
 * while the set churns. Both sides serve a fleet of {@value #FLEET} real loopback workers (in the
 * benchmark's own JVM) and a discovery that adds and removes one more worker every
 * {@value #CHURN_MILLIS} ms: Rollcall probes it on each return and publishes a new snapshot each
 * time; the baseline's loop picks the list up every 5 s. The thread count comes from the runner
 * ({@code -t 1/2/4}); {@link Bench} runs it for 1, 2 and 4 readers. Mode throughput (calls per
 * second, summed over the readers): with more readers than cores, a reader that the scheduler
 * leaves out for a while lowers the sum by its share, where the average time per call of that one
 * reader would blow up the mean.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReadPathBenchmark {

    static final int FLEET = 100;
    static final int CHURN_MILLIS = 10;

    /** The fleet, its churn, and whichever reader a benchmark uses; one per trial. */
    abstract static class Fleet {
        LoopbackServers servers;
        PushDiscovery discovery;
        ScheduledExecutorService churn;
        List<WorkerEndpoint> steady;
        List<WorkerEndpoint> withExtra;

        void startFleet() {
            servers = LoopbackServers.start(FLEET + 1, 0, 0, "1.0.0");
            List<WorkerEndpoint> all = servers.endpoints();
            steady = all.subList(0, FLEET);
            withExtra = new ArrayList<>(all);
            discovery = new PushDiscovery("push[benchmark]");
        }

        void startChurn() {
            churn = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "bench-churn");
                t.setDaemon(true);
                return t;
            });
            boolean[] in = {false};
            churn.scheduleAtFixedRate(() -> {
                in[0] = !in[0];
                discovery.push(in[0] ? withExtra : steady);
            }, CHURN_MILLIS, CHURN_MILLIS, TimeUnit.MILLISECONDS);
        }

        void stopFleet() {
            churn.shutdownNow();
            servers.close();
        }
    }

    @State(Scope.Benchmark)
    public static class RollcallFleet extends Fleet {
        WorkerResolver resolver;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            startFleet();
            resolver = WorkerResolver.builder().name("read-path").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0.0")).build();
            discovery.push(steady);
            resolver.await(s -> s.counts().compatible() == FLEET, Duration.ofSeconds(60));
            startChurn();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            long snapshots = resolver.pin().number();
            resolver.close();
            stopFleet();
            System.out.println("read-path: " + snapshots + " snapshots published during the trial");
        }
    }

    @State(Scope.Benchmark)
    public static class BaselineFleet extends Fleet {
        HandRolledResolver baseline;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            startFleet();
            discovery.push(steady);
            baseline = new HandRolledResolver(discovery::urls, "1.0.0").start(Duration.ofSeconds(5));
            if (!baseline.awaitWorkers(FLEET, Duration.ofSeconds(60))) {
                throw new IllegalStateException("baseline did not find its " + FLEET + " workers");
            }
            startChurn();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            baseline.close();
            stopFleet();
        }
    }

    @Benchmark
    public List<WorkerInfo> rollcall(RollcallFleet fleet) {
        return fleet.resolver.workers();
    }

    @Benchmark
    public List<String> baseline(BaselineFleet fleet) {
        return fleet.baseline.workers();
    }
}
