package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.core.internal.probe.FakeTransport;
import dev.rollcall.core.internal.serial.VirtualTime;
import dev.rollcall.core.internal.settings.LabelSettings;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.core.internal.settings.SubsetSettings;
import dev.rollcall.core.internal.snapshot.SnapshotBuilder;
import dev.rollcall.core.internal.snapshot.SnapshotFanOut;
import dev.rollcall.core.internal.snapshot.Subset;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.random.RandomGenerator;

/**
 * A tracker with its real scheduler, state machine, builder and pacer, in virtual time and over a
 * fake transport, and the steps tests take with it. Policy: exactly version 1.0.0.
 */
public abstract class TrackerHarness {

    static final Duration INITIAL = Duration.ofMillis(100);
    static final Duration REFRESH = Duration.ofSeconds(60);
    /** Every jitter draw is 0.5: a retry waits 0.9 × its base delay, a refresh 0.95 × the interval. */
    public static final RandomGenerator HALF = () -> Long.MIN_VALUE;
    static final VersionPolicy ONE_OH = w -> w.version().equals("1.0.0") ? Verdict.accept()
            : Verdict.reject("version '" + w.version() + "' is not 1.0.0");

    /** Whether the next {@link #tracker} keeps probe channels. */
    boolean keepChannels = true;
    /** The next {@link #tracker}'s {@code max-kept-channels}: more than any test's workers unless set. */
    int maxKeptChannels = 1_000;
    /** The next {@link #tracker}'s subset ({@code rollcall.subset.*}); null: off. */
    SubsetSettings subset;
    /** The next {@link #tracker}'s features (its subset comes from {@link #subset}). */
    TrackerFeatures features = TrackerFeatures.NONE;
    /** The next {@link #tracker}'s least time between snapshot builds (1 / max-rate); none unless set. */
    Duration publishInterval = Duration.ZERO;
    /** The policy of the next {@link #tracker}. */
    VersionPolicy policy = ONE_OH;
    final VirtualTime time = new VirtualTime();
    /** The next {@link #tracker}'s clock (snapshot times, staleness, the cache file's age). */
    Clock clock = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);
    final FakeTransport net = new FakeTransport();
    final List<FleetSnapshot> published = new ArrayList<>();
    /** The serial thread's CPU time as the pacer sees it: each build costs 1 ms. */
    long cpu;
    FleetTracker tracker;

    final WorkerEndpoint a = WorkerEndpoint.parse("grpc://127.0.0.1:7001");
    final WorkerEndpoint b = WorkerEndpoint.parse("grpc://127.0.0.1:7002");
    final WorkerEndpoint c = WorkerEndpoint.parse("grpc://127.0.0.1:7003");

    LabelSettings labels = new LabelSettings(LabelSelector.everything(), LabelSelector.everything(), 1,
            Duration.ZERO);

    FleetTracker tracker(int concurrency) {
        ProbeSettings settings = new ProbeSettings(Duration.ofSeconds(2), concurrency, INITIAL,
                Duration.ofSeconds(10), REFRESH, keepChannels, 1 << 20, ProbeTls.DEFAULT)
                .withMaxKeptChannels(maxKeptChannels);
        FleetSnapshot initial = FleetSnapshot.builder(0).publishedAt(Instant.EPOCH).build();
        // The owner of the snapshots, as the resolver's: every one published is also kept in order here.
        SnapshotFanOut owner = new SnapshotFanOut("test", initial, Executors::newSingleThreadExecutor,
                Executors.newSingleThreadExecutor(), time::read);
        owner.beforeEachPublish(published::add);
        TrackerFeatures f = subset == null ? features : new TrackerFeatures(features.schemas(), features.drains(),
                Optional.of(new Subset(subset)), features.cache(), features.cacheMaxWait());
        tracker = new FleetTracker(new FleetTracker.Parts(time.context(), net, clock, HALF,
                () -> cpu += 500_000), settings, publishInterval.toNanos(), f,
                new SnapshotBuilder(policy, clock, null, KeyPaths.none(), labels, time::read, initial), owner);
        return tracker;
    }

    void candidates(WorkerEndpoint... endpoints) {
        tracker.applyCandidates(new LinkedHashSet<>(List.of(endpoints))); // probed in this order
        time.runUntilIdle();
    }

    FleetSnapshot last() {
        return published.get(published.size() - 1);
    }

    State state(WorkerEndpoint e) {
        return last().status(e.url()).orElseThrow().state();
    }

    void answer(WorkerEndpoint e, String version, String instance) {
        answer(e, version, instance, Map.of());
    }

    void answer(WorkerEndpoint e, String version, String instance, Map<String, String> labels) {
        net.pending(e.url()).answer(version, instance, labels);
        time.runUntilIdle();
    }

    void fail(WorkerEndpoint e) {
        net.pending(e.url()).fail();
        time.runUntilIdle();
    }

}
