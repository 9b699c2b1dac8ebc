package dev.rollcall.discovery.staticlist;

import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.ThreadCensus;
import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.WorkerDiscovery;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StaticWorkerDiscoveryTest {

    /**
     * The design target for noticing an edit is one second; the assertion allows two so that a
     * loaded CI machine does not turn scheduling jitter into a failure.
     */
    private static final Duration EDIT_SEEN_WITHIN = Duration.ofSeconds(2);

    /**
     * Long enough that only a change event, never the safety re-read, can explain a quick update
     * (where the platform has no real events, the backend caps the period at 500 ms itself).
     */
    private static final String EVENTS_ONLY = "1h";

    @TempDir
    Path dir;

    private final List<WorkerDiscovery> started = new ArrayList<>();

    @AfterEach
    void closeAll() {
        started.forEach(WorkerDiscovery::close);
    }

    @Test
    void publishesPropertyListImmediatelyOnStart() {
        CandidateRecorder listener = new CandidateRecorder();
        WorkerDiscovery discovery = start(Map.of("endpoints", "grpc://h1:7001, grpcs://h2:7002"), listener);

        // No await: the configured list is published on the thread that calls start.
        assertThat(listener.sets()).containsExactly(endpoints("grpc://h1:7001", "grpcs://h2:7002"));
        assertThat(listener.errors()).isEmpty();
        assertThat(discovery.description()).isEqualTo("static[2 endpoints]");
    }

    @Test
    void publishesUnionOfPropertyAndFile() throws IOException {
        Path file = write("workers.txt", "grpc://f1:7001\ngrpc://p1:7001\n");
        CandidateRecorder listener = new CandidateRecorder();

        WorkerDiscovery discovery = start(Map.of("endpoints", "grpc://p1:7001", "file", file.toString()), listener);

        assertThat(listener.sets()).first().isEqualTo(endpoints("grpc://p1:7001"));
        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://p1:7001", "grpc://f1:7001")));
        assertThat(discovery.description()).isEqualTo("static[file=" + file.toAbsolutePath() + ", 2 endpoints]");
    }

    @Test
    void publishesEditedFileWithinASecond() throws IOException {
        Path file = write("workers.txt", "grpc://a:7001\n");
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of("file", file.toString(), "file.poll-interval", EVENTS_ONLY), listener);
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://a:7001").equals(listener.latest()));

        Files.writeString(file, "grpc://a:7001\ngrpc://b:7002\n");

        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://a:7001", "grpc://b:7002")));
    }

    @Test
    void seesFileReplacedByAtomicRename() throws IOException {
        Path file = write("workers.txt", "grpc://a:7001\n");
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of("file", file.toString(), "file.poll-interval", EVENTS_ONLY), listener);
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://a:7001").equals(listener.latest()));

        // What vim, IntelliJ and most config-management tools do when they save.
        Path temp = write(".workers.txt.swp", "grpc://c:7003\n");
        Files.move(temp, file, ATOMIC_MOVE, REPLACE_EXISTING);

        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://c:7003")));
    }

    @Test
    void seesKubernetesConfigMapSymlinkSwap() throws IOException {
        // The layout the kubelet gives a mounted ConfigMap: workers.txt -> ..data/workers.txt, ..data -> ..<version>.
        write("..v1/workers.txt", "grpc://old:7001\n");
        Files.createSymbolicLink(dir.resolve("..data"), Path.of("..v1"));
        Path file = Files.createSymbolicLink(dir.resolve("workers.txt"), Path.of("..data/workers.txt"));
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of("file", file.toString(), "file.poll-interval", EVENTS_ONLY), listener);
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://old:7001").equals(listener.latest()));

        // An update: a new version directory, then ..data is re-pointed by renaming a fresh link over it.
        write("..v2/workers.txt", "grpc://new:7001\n");
        Path tmpLink = Files.createSymbolicLink(dir.resolve("..data_tmp"), Path.of("..v2"));
        Files.move(tmpLink, dir.resolve("..data"), ATOMIC_MOVE, REPLACE_EXISTING);

        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://new:7001")));
    }

    @Test
    void reReadsPeriodicallyWhenNoChangeEventArrives() throws IOException {
        // Editing the target of a symlink in another directory makes no event in the watched one,
        // just like a file system without change events; only the periodic re-read can see it.
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Path target = Files.writeString(elsewhere.resolve("real.txt"), "grpc://a:7001\n");
        Path watched = Files.createDirectory(dir.resolve("watched"));
        Path file = Files.createSymbolicLink(watched.resolve("workers.txt"), target);
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of("file", file.toString(), "file.poll-interval", "200ms"), listener);
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://a:7001").equals(listener.latest()));

        Files.writeString(target, "grpc://b:7002\n");

        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://b:7002")));
    }

    // The contract (StaticWorkerDiscoveryContractTest) covers a missing file's onError and the recovery.
    @Test
    void reportsAMissingFileOnceSayingItDoesNotExist() throws IOException {
        Path file = dir.resolve("workers.txt");
        CandidateRecorder listener = new CandidateRecorder();
        start(Map.of("file", file.toString()), listener);

        await().atMost(EDIT_SEEN_WITHIN).until(() -> !listener.errors().isEmpty());
        assertThat(listener.errors().get(0)).hasMessageContaining("does not exist");

        Files.writeString(file, "grpc://late:7001\n");

        await().atMost(EDIT_SEEN_WITHIN).untilAsserted(() ->
                assertThat(listener.latest()).isEqualTo(endpoints("grpc://late:7001")));
        assertThat(listener.errors()).as("reported once, not on every check").hasSize(1);
    }

    @Test
    void doesNotRepublishWhenTheSetIsUnchanged() throws IOException {
        Path file = write("workers.txt", "grpc://a:7001\n");
        CandidateRecorder listener = new CandidateRecorder();
        StaticWorkerDiscovery discovery = (StaticWorkerDiscovery) start(
                Map.of("file", file.toString(), "file.poll-interval", EVENTS_ONLY), listener);
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://a:7001").equals(listener.latest()));

        long reads = discovery.fileReads();
        Files.writeString(file, "grpc://a:7001\n");
        await().atMost(EDIT_SEEN_WITHIN).until(() -> discovery.fileReads() > reads);

        long readsAfterRewrite = discovery.fileReads();
        Files.writeString(file, "grpc://a:7001   # only a comment changed\n");
        await().atMost(EDIT_SEEN_WITHIN).until(() -> discovery.fileReads() > readsAfterRewrite);

        Files.writeString(file, "grpc://b:7002\n");
        await().atMost(EDIT_SEEN_WITHIN).until(() -> endpoints("grpc://b:7002").equals(listener.latest()));

        assertThat(listener.sets()).containsExactly(endpoints("grpc://a:7001"), endpoints("grpc://b:7002"));
    }

    @Test
    void startsNoThreadWithoutAFile() {
        ThreadCensus before = ThreadCensus.take();
        WorkerDiscovery discovery = start(Map.of("endpoints", "grpc://a:7001"), new CandidateRecorder());

        assertThat(before.newThreads(FileWatchLoop.THREAD_NAME)).isEmpty();
        assertThatCode(discovery::close).doesNotThrowAnyException();
    }

    private WorkerDiscovery start(Map<String, String> keys, CandidateRecorder listener) {
        Map<String, String> full = new HashMap<>();
        keys.forEach((k, v) -> full.put("rollcall.discovery.static." + k, v));
        WorkerDiscovery discovery = new StaticWorkerDiscoveryProvider()
                .create(Settings.of(full).scope("rollcall.discovery.static."));
        started.add(discovery);
        discovery.start(listener);
        return discovery;
    }

    private Path write(String name, String content) throws IOException {
        Path path = dir.resolve(name);
        Files.createDirectories(path.getParent());
        return Files.writeString(path, content);
    }

    static Set<WorkerEndpoint> endpoints(String... urls) {
        return Arrays.stream(urls).map(WorkerEndpoint::parse).collect(Collectors.toUnmodifiableSet());
    }
}
