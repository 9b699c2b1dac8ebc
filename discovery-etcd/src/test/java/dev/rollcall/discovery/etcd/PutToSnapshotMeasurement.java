package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import dev.rollcall.local.etcd.EtcdServer;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Measures how long a change written to etcd takes to reach a resolver snapshot, on loopback:
 * a real etcd, real workers, a real resolver with the semver policy, nothing mocked.
 *
 * <p>Each round writes one worker's key (a {@code put} of its URL), waits for the first snapshot
 * that lists it as a candidate and for the first in which it is compatible (after the resolver has
 * probed it), then deletes the key and waits for the snapshot without it. The time is taken with
 * {@link System#nanoTime()} just before the {@code put} (or {@code delete}) is sent and when the
 * resolver's snapshot listener is called. 50 rounds warm the JVM up first and are not counted.
 *
 * <p>Not part of the default test run (tag {@code measurement}); run it with the command in the
 * module's README. It writes its figures to {@code target/put-to-snapshot.txt} and the test output.
 */
@Tag("measurement")
class PutToSnapshotMeasurement {

    private static final int WARM_UP = 50;
    private static final int ROUNDS = Integer.getInteger("rollcall.measure.rounds", 200);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private record Seen(long nanos, FleetSnapshot snapshot) {
    }

    @Test
    void putToSnapshot() throws Exception {
        String prefix = "/measure/";
        try (EtcdServer server = EtcdServer.start();
             Etcd etcd = new Etcd(server);
             WorkerFleet fleet = WorkerFleet.start("1.0.0", "1.0.0", "1.0.0", "1.0.0");
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                     "rollcall.discovery.type", "etcd",
                     "rollcall.discovery.etcd.endpoints", server.endpoint(),
                     "rollcall.discovery.etcd.prefix", prefix,
                     "rollcall.policy.type", "semver",
                     "rollcall.policy.semver.range", "^1.0.0")))) {
            BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
            resolver.addListener(s -> seen.add(new Seen(System.nanoTime(), s)));
            resolver.await(s -> s.number() > 0, WAIT);

            long[] acked = new long[ROUNDS];
            long[] candidate = new long[ROUNDS];
            long[] compatible = new long[ROUNDS];
            long[] gone = new long[ROUNDS];
            for (int round = -WARM_UP; round < ROUNDS; round++) {
                int i = Math.floorMod(round, fleet.workers().size());
                String url = fleet.worker(i).endpoint().url();
                String key = prefix + "w" + i;
                seen.clear();

                long put = System.nanoTime();
                etcd.put(key, url);
                long ack = System.nanoTime();
                Seen listed = awaitSnapshot(seen, s -> s.status(url).isPresent());
                Seen usable = isCompatible(listed.snapshot(), url) ? listed
                        : awaitSnapshot(seen, s -> isCompatible(s, url));

                long delete = System.nanoTime();
                etcd.delete(key);
                Seen left = awaitSnapshot(seen, s -> s.status(url).isEmpty());

                if (round >= 0) {
                    acked[round] = ack - put;
                    candidate[round] = listed.nanos() - put;
                    compatible[round] = usable.nanos() - put;
                    gone[round] = left.nanos() - delete;
                }
            }

            String report = String.join("\n",
                    "put -> etcd -> resolver snapshot on loopback, " + ROUNDS + " puts and " + ROUNDS + " deletes"
                            + " after " + WARM_UP + " warm-up rounds (" + Runtime.getRuntime().availableProcessors()
                            + " cores, load average " + String.format("%.1f",
                            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()) + " at the end)",
                    line("put acknowledged by etcd (fsync included)", acked),
                    line("put -> snapshot listing the new candidate", candidate),
                    line("put -> snapshot with it compatible (probed)", compatible),
                    line("delete -> snapshot without it", gone));
            System.out.println(report);
            Files.writeString(Path.of("target", "put-to-snapshot.txt"), report + "\n");
            assertThat(Arrays.stream(candidate).min().orElseThrow()).isPositive();
        }
    }

    private static boolean isCompatible(FleetSnapshot s, String url) {
        return s.status(url).map(st -> st.state() == WorkerStatus.State.COMPATIBLE).orElse(false);
    }

    /** The first snapshot meeting {@code condition}, consuming the ones before it. */
    private static Seen awaitSnapshot(BlockingQueue<Seen> seen, Predicate<FleetSnapshot> condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            Seen s = seen.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (s == null) {
                throw new AssertionError("no matching snapshot within " + WAIT);
            }
            if (condition.test(s.snapshot())) {
                return s;
            }
        }
    }

    private static String line(String what, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return String.format("  %-46s median %6.2f ms   p99 %6.2f ms   max %6.2f ms", what,
                ms(percentile(sorted, 50)), ms(percentile(sorted, 99)), ms(sorted[sorted.length - 1]));
    }

    /** Nearest-rank percentile of sorted values. */
    static long percentile(long[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
