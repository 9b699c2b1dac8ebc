package dev.rollcall.discovery.staticlist;

import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;

/**
 * The discovery contract for the {@code static} backend's watched file: the source is a file of
 * one URL per line, replaced by an atomic rename (as editors and config tools save), and removed
 * to make it unreachable.
 */
class StaticWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    @TempDir
    Path dir;

    private String malformedLine;
    private String hostileLines;
    private String content = "";

    private Path file() {
        return dir.resolve("workers.txt");
    }

    @Override
    protected String type() {
        return "static";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("file", file().toString());
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) throws IOException {
        // The malformed line first, so that its line number stays 1.
        content = (malformedLine == null ? "" : malformedLine + "\n") + (hostileLines == null ? "" : hostileLines + "\n")
                + candidates.stream().map(e -> e.url() + "\n").collect(Collectors.joining());
        replaceFile();
    }

    @Override
    protected String writeMalformedEntry() throws IOException {
        malformedLine = "grpc//not-an-endpoint:7001";
        content = malformedLine + "\n" + content;
        replaceFile();
        return file().toAbsolutePath() + ":1";
    }

    /**
     * A line that is no endpoint, with the hostile text after it: its line break makes the rest a
     * line of its own, whose terminal escape the WARN about it must not repeat raw.
     */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) throws IOException {
        hostileLines = "grpc//hostile" + hostile;
        content = hostileLines + "\n" + content;
        replaceFile();
        String secondLine = hostile.substring(hostile.indexOf('\n') + 1);
        return Optional.of(file().toAbsolutePath() + ":2: skipping malformed line, keeping the others: invalid worker"
                + " endpoint '" + PeerText.escape(secondLine) + "'");
    }

    @Override
    protected String makeSourceUnreachable() throws IOException {
        Files.delete(file());
        return file().toAbsolutePath().toString();
    }

    @Override
    protected void makeSourceReachable() throws IOException {
        replaceFile();
    }

    @Override
    protected List<String> threadNamePrefixes() {
        return List.of(FileWatchLoop.THREAD_NAME);
    }

    /** Writes beside and renames over, so the backend never reads a half-written file. */
    private void replaceFile() throws IOException {
        Path temp = Files.writeString(dir.resolve(".workers.txt.tmp"), content);
        Files.move(temp, file(), ATOMIC_MOVE, REPLACE_EXISTING);
    }
}
