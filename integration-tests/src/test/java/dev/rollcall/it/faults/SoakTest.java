package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.local.FleetWorker;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.WorkerFleet;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Churn on 200 real workers for a while (joins, leaves, restarts in place with new instance ids,
 * version changes), driven by a seeded random generator, against a resolver with a semver policy.
 * Every published snapshot is checked as it arrives; after the churn the resolver must converge to
 * exactly the expected set, with heap and threads where they were after the warm-up.
 *
 * <p>Duration: {@code -Drollcall.soak.duration=30m} (default 2m; ISO-8601 or a number with s, m or h);
 * seed: {@code -Drollcall.soak.seed} (default 8). The numbers go to {@code target/soak-report.txt}.
 */
class SoakTest {

    private static final Duration CONVERGE = Duration.ofSeconds(60);
    private static final SemverRangePolicy POLICY = SemverRangePolicy.of("^1.0");
    private static final String[] VERSIONS = {"1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0"};
    private static final int FLEET = 200;
    /**
     * Heap after GC may grow by this much between the warmed-up point and the end. Both points are a
     * converged fleet of about 200 workers (measured: about 22 MB used in all, workers included); what
     * differs is noise: the exact number of live workers (180 to 220, each with its own server in this
     * JVM), pooled buffers and caches that settle late. The 2-minute soak makes about 3,000 churn
     * events after the warm-up: a leak of a channel (4 to 15 KB) for one event in a hundred, or of
     * 3 KB for every event, would exceed it; the 30-minute soak tightens that to about 200 bytes per
     * event.
     */
    private static final long HEAP_TOLERANCE_BYTES = 8L << 20;

    private final PushDiscovery discovery = new PushDiscovery();
    /** Discovered workers by URL: what the driver last pushed. Written only by the driver. */
    private final Map<String, FleetWorker> discovered = new ConcurrentHashMap<>();
    /** Hashes of the candidate sets pushed recently: every snapshot must show one of them. */
    private final Set<Integer> recentPushes = ConcurrentHashMap.newKeySet();
    private final ArrayDeque<Integer> pushOrder = new ArrayDeque<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicLong snapshotsChecked = new AtomicLong();
    private final Map<String, Long> events = new TreeMap<>();

    @Test
    void churnOnTwoHundredWorkersKeepsEverySnapshotConsistentAndConvergesWithFlatHeapAndThreads()
            throws Exception {
        Duration duration = parse(System.getProperty("rollcall.soak.duration", "2m"));
        long seed = Long.getLong("rollcall.soak.seed", 8);
        Duration warmUp = duration.dividedBy(6).compareTo(Duration.ofSeconds(20)) < 0
                ? Duration.ofSeconds(20) : duration.dividedBy(6);
        Random random = new Random(seed);
        try (WorkerFleet fleet = WorkerFleet.start();
             WorkerResolver r = WorkerResolver.builder().name("soak").discovery(discovery).policy(POLICY)
                     .probeTimeout(Duration.ofSeconds(2)).backoff(Duration.ofMillis(50), Duration.ofMillis(500))
                     .build()) {
            for (int i = 0; i < FLEET; i++) {
                FleetWorker w = fleet.addWorker(VERSIONS[random.nextInt(VERSIONS.length)]);
                discovered.put(w.endpoint().url(), w);
            }
            r.addListener(this::check);
            push();
            awaitConverged(r);

            churn(fleet, random, warmUp);
            FleetSnapshot warm = awaitConverged(r);
            long heapWarm = usedHeapAfterGc();
            Map<String, Integer> threadsWarm = ThreadCensus.take().byKind();
            long probesWarm = r.probesSent();
            Instant churnStart = Instant.now();
            synchronized (events) {
                events.clear();
            }

            long eventsDuringChurn = churn(fleet, random, duration.minus(warmUp));
            Duration churned = Duration.between(churnStart, Instant.now());
            FleetSnapshot end = awaitConverged(r);
            long heapEnd = usedHeapAfterGc();
            Map<String, Integer> threadsEnd = ThreadCensus.take().byKind();

            String report = String.format(
                    "soak %s (seed %d): %d churn events after warm-up in %s %s; %d snapshots checked;"
                            + " %d probes (%.2f per event); workers %d -> %d; used heap after GC %.1f MB -> %.1f MB"
                            + " (%+.1f MB); threads %s -> %s",
                    duration, seed, eventsDuringChurn, churned, events, snapshotsChecked.get(),
                    r.probesSent() - probesWarm, (r.probesSent() - probesWarm) / (double) eventsDuringChurn,
                    warm.counts().candidates(), end.counts().candidates(), heapWarm / 1e6, heapEnd / 1e6,
                    (heapEnd - heapWarm) / 1e6, threadsWarm, threadsEnd);
            System.out.println(report);
            writeReport(report);

            assertThat(violations).as("invariant violations").isEmpty();
            assertThat(eventsDuringChurn).isGreaterThan(100);
            assertThat(heapEnd - heapWarm).as(report).isLessThan(HEAP_TOLERANCE_BYTES);
            // No kind of thread grew (threads other tests left behind may only have ended meanwhile);
            // the resolver's own are exactly as many. The workers' threads follow the fleet's size
            // and are only bounded: their cached pools' idle threads time out on their own, and each
            // worker's event loops (at most 2 per core) start on first use.
            threadsEnd.forEach((kind, n) -> {
                if (!kind.startsWith("rollcall-worker")) {
                    assertThat(n).as("%s threads; %s", kind, report)
                            .isLessThanOrEqualTo(threadsWarm.getOrDefault(kind, 0) + 2);
                }
            });
            for (String kind : List.of("rollcall-resolver-soak", "rollcall-probe-soak", "rollcall-listeners-soak")) {
                assertThat(threadsEnd.get(kind)).as(kind).isEqualTo(threadsWarm.get(kind));
            }
            assertThat(threadsEnd.getOrDefault("rollcall-worker", 0)).as(report).isLessThanOrEqualTo(3 * 220);
            assertThat(threadsEnd.getOrDefault("rollcall-worker-io", 0)).as(report)
                    .isLessThanOrEqualTo(2 * Runtime.getRuntime().availableProcessors() * 220);
        }
    }

    /** Runs the churn for {@code length}, one event every 20 ms; returns how many events ran. */
    private long churn(WorkerFleet fleet, Random random, Duration length) throws InterruptedException {
        ScheduledExecutorService driver = Executors.newSingleThreadScheduledExecutor();
        AtomicLong count = new AtomicLong();
        CountDownLatch stopped = new CountDownLatch(1);
        long end = System.nanoTime() + length.toNanos();
        driver.scheduleWithFixedDelay(() -> {
            try {
                if (System.nanoTime() >= end) {
                    driver.shutdown();
                    stopped.countDown();
                    return;
                }
                churnOnce(fleet, random);
                count.incrementAndGet();
            } catch (RuntimeException | Error e) {
                violations.add("the churn driver failed: " + e);
                driver.shutdown();
                stopped.countDown();
            }
        }, 0, 20, TimeUnit.MILLISECONDS);
        try {
            assertThat(stopped.await(length.toSeconds() + 120, TimeUnit.SECONDS)).isTrue();
        } finally {
            driver.shutdownNow();
            driver.awaitTermination(30, TimeUnit.SECONDS);
        }
        return count.get();
    }

    private void churnOnce(WorkerFleet fleet, Random random) {
        List<FleetWorker> current = new ArrayList<>(discovered.values());
        current.sort((a, b) -> a.endpoint().url().compareTo(b.endpoint().url())); // seeded choices stay reproducible
        int roll = random.nextInt(100);
        String event;
        // Joins and leaves are equally likely, so the fleet wanders between 180 and 220 workers.
        if (current.size() < FLEET * 9 / 10 || (roll < 20 && current.size() < FLEET * 11 / 10)) {
            FleetWorker w = fleet.addWorker(VERSIONS[random.nextInt(VERSIONS.length)]);
            discovered.put(w.endpoint().url(), w);
            event = "join";
        } else if (roll < 40 || current.size() > FLEET * 11 / 10) {
            FleetWorker w = current.get(random.nextInt(current.size()));
            discovered.remove(w.endpoint().url());
            push(); // it leaves discovery first, then stops: as a registered worker does
            fleet.retire(w);
            event = "leave";
        } else {
            FleetWorker w = current.get(random.nextInt(current.size()));
            boolean sameVersion = roll < 70;
            event = restartInPlace(fleet, w, sameVersion ? w.version() : VERSIONS[random.nextInt(VERSIONS.length)])
                    ? (sameVersion ? "restart" : "version-change") : "restart-failed";
        }
        synchronized (events) {
            events.merge(event, 1L, Long::sum);
        }
        push();
    }

    /**
     * Restarts {@code w} on its port. Its port lies below the ephemeral range (testkit's
     * LoopbackPorts), so no outgoing connection can take it meanwhile, and a stopped worker lets go of
     * it before {@code close()} returns: a restart that cannot bind is a bug, counted as a violation
     * (the soak allows none). The worker then leaves discovery, so that the churn can go on.
     */
    private boolean restartInPlace(WorkerFleet fleet, FleetWorker w, String version) {
        try {
            w.restart(version);
            return true;
        } catch (java.io.UncheckedIOException portTaken) {
            violation("restart in place of " + w + " failed: " + portTaken.getCause().getMessage());
            discovered.remove(w.endpoint().url());
            fleet.retire(w);
            return false;
        }
    }

    private void push() {
        Set<WorkerEndpoint> set = new HashSet<>();
        discovered.values().forEach(w -> set.add(w.endpoint()));
        int hash = urls(set).hashCode();
        synchronized (pushOrder) {
            recentPushes.add(hash);
            pushOrder.add(hash);
            while (pushOrder.size() > 5_000) {
                recentPushes.remove(pushOrder.poll());
            }
        }
        discovery.push(set);
    }

    /** On the listener thread: the invariants every published snapshot must keep. */
    private void check(FleetSnapshot s) {
        snapshotsChecked.incrementAndGet();
        Set<String> candidates = new TreeSet<>();
        s.statuses().forEach(st -> candidates.add(st.endpoint().url()));
        if (s.number() > 1 && !recentPushes.contains(candidates.hashCode())) {
            violation("snapshot " + s.number() + " shows " + candidates.size()
                    + " candidates that are no set discovery published");
        }
        for (WorkerInfo w : s.workers()) {
            if (!POLICY.check(w).accepted()) {
                violation("snapshot " + s.number() + " serves " + w + ", which the policy rejects");
            }
            FleetWorker real = discovered.get(w.endpoint().url());
            if (real == null) {
                continue; // left discovery since; the candidate-set check covers that
            }
            String instance;
            String version;
            synchronized (real) {
                instance = real.instanceId();
                version = real.version();
            }
            if (w.instanceId().equals(instance) && !w.version().equals(version)) {
                violation("snapshot " + s.number() + " serves " + w + " but that instance runs '" + version + "'");
            }
        }
    }

    private void violation(String v) {
        if (violations.size() < 20) {
            violations.add(v);
        }
    }

    /** Waits until the snapshot shows exactly the discovered workers, each judged on its running version. */
    private FleetSnapshot awaitConverged(WorkerResolver r) throws Exception {
        assertThat(violations).as("invariant violations").isEmpty();
        Set<String> compatible = new TreeSet<>();
        Set<String> rejected = new TreeSet<>();
        discovered.forEach((url, w) -> (w.version().startsWith("1.") ? compatible : rejected).add(url));
        return r.await(s -> s.staleSince().isEmpty()
                && s.counts().candidates() == compatible.size() + rejected.size()
                && urls(s.compatibleEndpoints()).equals(compatible)
                && s.statuses().stream().filter(st -> st.state() == State.REJECTED)
                        .map(st -> st.endpoint().url()).collect(java.util.stream.Collectors.toSet()).equals(rejected)
                && s.workers().stream().allMatch(w -> w.instanceId().equals(discovered.get(w.endpoint().url())
                        .instanceId())), CONVERGE);
    }

    private static Set<String> urls(Iterable<WorkerEndpoint> endpoints) {
        Set<String> s = new TreeSet<>();
        endpoints.forEach(e -> s.add(e.url()));
        return s;
    }

    private static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static Duration parse(String text) {
        String s = text.strip();
        if (s.toUpperCase(java.util.Locale.ROOT).startsWith("P")) {
            return Duration.parse(s);
        }
        Matcher m = Pattern.compile("(\\d+)\\s*(s|m|h)").matcher(s);
        if (!m.matches()) {
            throw new IllegalArgumentException("rollcall.soak.duration='" + text + "' is not a duration like 2m or PT30M");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }

    private static void writeReport(String report) throws IOException {
        Path file = Path.of("target", "soak-report.txt");
        Files.createDirectories(file.getParent());
        Files.writeString(file, Instant.now() + " " + report + System.lineSeparator(), StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
