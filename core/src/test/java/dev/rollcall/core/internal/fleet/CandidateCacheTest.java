package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.CacheSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


class CandidateCacheTest {

    private static final Instant T = Instant.parse("2026-11-30T10:00:00Z");
    private static final Set<WorkerEndpoint> SET = Set.of(
            WorkerEndpoint.parse("grpc://10.0.0.7:7001").withLabels(Map.of("zone", "eu 1&2", "env", "prod")),
            WorkerEndpoint.parse("grpcs://worker-2.example:7443"));

    @TempDir
    Path dir;

    /** What a resolver with the default settings reads from {@code file}. */
    static Optional<CandidateCache.Loaded> load(Path file) {
        try (CandidateCache cache = new CandidateCache(new CacheSettings(file), "test")) {
            return cache.load(T).loaded();
        }
    }

    @Test
    void aWrittenSetReadsBackWithItsLabelsAndTime() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, SET, T);
        CandidateCache.Loaded loaded = load(file).orElseThrow();
        assertThat(loaded.candidates()).isEqualTo(SET);
        assertThat(loaded.candidates()).filteredOn(e -> e.port() == 7001).singleElement()
                .satisfies(e -> assertThat(e.labels()).isEqualTo(Map.of("zone", "eu 1&2", "env", "prod")));
        assertThat(loaded.writtenAt()).isEqualTo(T);
        try (var files = Files.list(dir)) {
            assertThat(files).as("no temporary file left behind").containsExactly(file);
        }
    }

    @Test
    void anEmptySetIsASetToo() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(), T);
        assertThat(load(file).orElseThrow().candidates()).isEmpty();
    }

    @Test
    void aTruncatedFileIsRecognised() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, SET, T);
        String text = Files.readString(file);
        String cut = text.substring(0, text.lastIndexOf("end "));
        assertThatThrownBy(() -> CandidateCache.parse(cut)).hasMessageStartingWith("truncated");
        Files.writeString(file, cut);
        assertThat(load(file)).isEmpty();
    }

    @Test
    void aCorruptFileIsRecognised() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, SET, T);
        String corrupt = Files.readString(file).replace("10.0.0.7", "10.0.0.8");
        assertThatThrownBy(() -> CandidateCache.parse(corrupt)).hasMessageContaining("checksum");
    }

    @Test
    void aForeignFileIsRecognised() throws Exception {
        Path file = dir.resolve("candidates");
        Files.write(file, "grpc://10.0.0.7:7001\n".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> CandidateCache.parse(Files.readString(file)))
                .hasMessageStartingWith("not a Rollcall candidate cache");
        assertThat(load(file)).isEmpty();
    }

    @Test
    void aMissingFileIsNoCandidates() {
        assertThat(load(dir.resolve("never-written"))).isEmpty();
    }

    @Test
    void aFolderThatDoesNotExistFailsStartUpNamingTheKey() {
        assertThatThrownBy(() -> CacheSettings.read(RollcallConfig.of(Map.of(
                "rollcall.discovery.cache.file", dir.resolve("no/such/folder/candidates").toString())).settings(),
                CoreKeys.MAX_CANDIDATES.defaultValue()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.cache.file");
    }

    /** A set large enough that its file takes many writes: half of it is well inside the body. */
    private static Set<WorkerEndpoint> big(int port0) {
        Set<WorkerEndpoint> set = new HashSet<>();
        for (int i = 0; i < 5_000; i++) {
            set.add(WorkerEndpoint.parse("grpc://10.0." + (i / 250) + "." + (i % 250) + ":" + (port0 + i % 7)));
        }
        return set;
    }

    /**
     * Issue 34's gap: writing in place instead of a temporary file and a rename passed every test. A
     * reader that looks while the new file is half written sees the old one, whole.
     */
    @Test
    void aReaderDuringAWriteSeesTheOldFileWhole() throws Exception {
        Path file = dir.resolve("candidates");
        Set<WorkerEndpoint> old = big(7000);
        Set<WorkerEndpoint> next = big(8000);
        CandidateCache.write(file, old, T);

        List<Optional<CandidateCache.Loaded>> seen = new ArrayList<>();
        CandidateCache.write(file, next, T.plusSeconds(60), () -> seen.add(load(file)));

        assertThat(seen).singleElement().satisfies(o -> assertThat(o).as("the file half way through the write")
                .hasValueSatisfying(l -> {
                    assertThat(l.candidates()).isEqualTo(old);
                    assertThat(l.writtenAt()).isEqualTo(T);
                }));
        assertThat(load(file).orElseThrow().candidates()).isEqualTo(next);
    }

    /** A write killed half way (a full disk, the process stopped) leaves the old file as it was, and no temporary file. */
    @Test
    void aWriteKilledHalfWayLeavesTheOldFile() throws Exception {
        Path file = dir.resolve("candidates");
        Set<WorkerEndpoint> old = big(7000);
        CandidateCache.write(file, old, T);

        assertThatThrownBy(() -> CandidateCache.write(file, big(8000), T.plusSeconds(60), () -> {
            throw new IOException("killed half way");
        })).isInstanceOf(IOException.class).hasMessage("killed half way");

        assertThat(load(file).orElseThrow().candidates()).isEqualTo(old);
        try (var files = Files.list(dir)) {
            assertThat(files).as("no temporary file left behind").containsExactly(file);
        }
    }
}
