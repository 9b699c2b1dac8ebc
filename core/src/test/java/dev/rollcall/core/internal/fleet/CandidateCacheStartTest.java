package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.drain.ExactDrain;
import dev.rollcall.core.internal.settings.CacheSettings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When the tracker starts from the cache file, in virtual time. */
class CandidateCacheStartTest extends TrackerHarness {

    private static final Instant WRITTEN = Instant.parse("2026-11-30T10:00:00Z");

    @TempDir
    Path dir;
    private CandidateCache cache;

    @AfterEach
    void close() {
        if (cache != null) {
            cache.close();
        }
    }

    /** A tracker that keeps {@code file} and starts from it after 3 s without discovery, started. */
    private void cache(Path file) {
        cache = new CandidateCache(new CacheSettings(file), "test");
        features = new TrackerFeatures(TrackerFeatures.SchemaGate.NONE, ExactDrain.Maker.OFF, Optional.empty(),
                Optional.of(cache), Duration.ofSeconds(3));
        tracker(64);
        tracker.start();
        time.runUntilIdle();
    }

    @Test
    void startsFromTheCacheOnlyOnceDiscoveryHasNotAnsweredForMaxWait() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        cache(file);
        tracker.discoveryFailed(new IllegalStateException("etcd down"));
        time.runUntilIdle();
        time.advance(Duration.ofMillis(2999));
        assertThat(last().counts().candidates()).isZero();

        time.advance(Duration.ofMillis(1));
        assertThat(last().counts().candidates()).isEqualTo(2);
        assertThat(last().staleSince()).contains(WRITTEN);
        assertThat(last().discoveryProblem()).hasValueSatisfying(p ->
                assertThat(p).contains("last-known-good candidates of " + file));
        answer(a, "1.0.0", "i1");
        time.advance(Duration.ofMillis(5)); // b is still being probed: one build spacing
        assertThat(state(a)).as("cached candidates are probed as usual").isEqualTo(State.COMPATIBLE);

        candidates(b); // discovery answers: its set replaces the cache's, nothing is stale
        assertThat(last().staleSince()).isEmpty();
        assertThat(last().discoveryProblem()).isEmpty();
        assertThat(last().status(a.url())).isEmpty();
    }

    @Test
    void neverUsesTheCacheOnceDiscoveryHasAnswered() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        cache(file);
        candidates(c);
        time.advance(Duration.ofSeconds(10));
        assertThat(last().counts().candidates()).isEqualTo(1);
        assertThat(last().staleSince()).isEmpty();
    }

    @Test
    void aCorruptCacheIsIgnoredAndNothingIsServed() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        Files.writeString(file, Files.readString(file).replace("7001", "7009"));
        cache(file);
        tracker.discoveryFailed(new IllegalStateException("etcd down"));
        time.runUntilIdle();
        time.advance(Duration.ofSeconds(10));
        assertThat(last().counts().candidates()).isZero();
        assertThat(last().discoveryProblem()).hasValueSatisfying(p ->
                assertThat(p).startsWith("discovery has not answered since start-up: "));
    }

    /** A file another user could have written is not started from: the resolver waits for discovery instead. */
    @Test
    void aCacheFileOthersMayWriteIsNotStartedFrom() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        cache(file);
        tracker.discoveryFailed(new IllegalStateException("etcd down"));
        time.runUntilIdle();
        time.advance(Duration.ofSeconds(10));
        assertThat(last().counts().candidates()).isZero();
        assertThat(last().discoveryProblem()).hasValueSatisfying(p ->
                assertThat(p).startsWith("discovery has not answered since start-up: "));
    }

    /** A file from last week's fleet is not started from: one WARN, and the snapshot says why. */
    @Test
    void aCacheFileOlderThanMaxAgeIsNotStartedFromAndTheSnapshotSaysWhy() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        clock = Clock.fixed(WRITTEN.plus(Duration.ofDays(7)).plusSeconds(3600), ZoneOffset.UTC);
        String log = logOf(() -> {
            cache(file);
            tracker.discoveryFailed(new IllegalStateException("etcd down"));
            time.runUntilIdle();
            time.advance(Duration.ofSeconds(10));
        });
        assertThat(last().counts().candidates()).isZero();
        assertThat(last().staleSince()).as("stale since discovery failed, not since the file was written")
                .contains(clock.instant());
        String why = "candidate cache " + file + " not used: written " + WRITTEN
                + ", 7d 1h ago, longer than rollcall.discovery.cache.max-age (1d)";
        assertThat(last().discoveryProblem()).hasValueSatisfying(p -> assertThat(p)
                .startsWith("discovery has not answered since start-up: ").endsWith("; " + why));
        assertThat(log.lines().filter(l -> l.contains("WARN") && l.contains("candidate cache"))).singleElement()
                .satisfies(l -> assertThat(l).contains(file.toString()).contains("7d 1h ago")
                        .contains("rollcall.discovery.cache.max-age (1d)"));

        candidates(c); // discovery answers: the cache file's story is over
        assertThat(last().discoveryProblem()).isEmpty();
    }

    @Test
    void aCacheFileYoungerThanMaxAgeIsStartedFrom() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        clock = Clock.fixed(WRITTEN.plus(Duration.ofHours(23)), ZoneOffset.UTC);
        cache(file);
        time.advance(Duration.ofSeconds(3));
        assertThat(last().counts().candidates()).isEqualTo(2);
        assertThat(last().staleSince()).contains(WRITTEN);
    }

    /** What slf4j-simple logged while {@code run} ran (it writes to whichever System.err is current). */
    private static String logOf(Runnable run) {
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            run.run();
        } finally {
            System.setErr(original);
            original.print(err.toString(StandardCharsets.UTF_8));
        }
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void discoverysSetsAreWrittenToTheCache() throws Exception {
        Path file = dir.resolve("candidates");
        cache(file);
        candidates(a, b);
        cache.close(); // lets the pending write finish
        assertThat(cache.load(Instant.now()).loaded().orElseThrow().candidates()).containsExactlyInAnyOrder(a, b);
    }

}
