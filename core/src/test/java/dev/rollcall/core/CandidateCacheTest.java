package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
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

    @Test
    void aWrittenSetReadsBackWithItsLabelsAndTime() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, SET, T);
        CandidateCache.Loaded loaded = CandidateCache.load(file).orElseThrow();
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
        assertThat(CandidateCache.load(file).orElseThrow().candidates()).isEmpty();
    }

    @Test
    void aTruncatedFileIsRecognised() throws Exception {
        Path file = dir.resolve("candidates");
        CandidateCache.write(file, SET, T);
        String text = Files.readString(file);
        String cut = text.substring(0, text.lastIndexOf("end "));
        assertThatThrownBy(() -> CandidateCache.parse(cut)).hasMessageStartingWith("truncated");
        Files.writeString(file, cut);
        assertThat(CandidateCache.load(file)).isEmpty();
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
        assertThat(CandidateCache.load(file)).isEmpty();
    }

    @Test
    void aMissingFileIsNoCandidates() {
        assertThat(CandidateCache.load(dir.resolve("never-written"))).isEmpty();
    }

    @Test
    void aFolderThatDoesNotExistFailsStartUpNamingTheKey() {
        assertThatThrownBy(() -> CandidateCache.CacheSettings.read(RollcallConfig.of(Map.of(
                "rollcall.discovery.cache.file", dir.resolve("no/such/folder/candidates").toString())).settings()))
                .isInstanceOf(dev.rollcall.api.ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.cache.file");
    }
}
