package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.internal.settings.CacheSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
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

    private void cache(Path file) {
        cache = new CandidateCache(new CacheSettings(file), "test");
        tracker.useCache(cache, Duration.ofSeconds(3));
        time.runUntilIdle();
    }

    @Test
    void startsFromTheCacheOnlyOnceDiscoveryHasNotAnsweredForMaxWait() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(a, b), WRITTEN);
        tracker(64);
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
        tracker(64);
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
        tracker(64);
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
        tracker(64);
        cache(file);
        tracker.discoveryFailed(new IllegalStateException("etcd down"));
        time.runUntilIdle();
        time.advance(Duration.ofSeconds(10));
        assertThat(last().counts().candidates()).isZero();
        assertThat(last().discoveryProblem()).hasValueSatisfying(p ->
                assertThat(p).startsWith("discovery has not answered since start-up: "));
    }

    @Test
    void discoverysSetsAreWrittenToTheCache() throws Exception {
        Path file = dir.resolve("candidates");
        tracker(64);
        cache(file);
        candidates(a, b);
        cache.close(); // lets the pending write finish
        assertThat(cache.load().orElseThrow().candidates()).containsExactlyInAnyOrder(a, b);
    }

}
