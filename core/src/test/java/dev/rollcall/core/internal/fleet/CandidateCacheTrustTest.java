package dev.rollcall.core.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.CacheSettings;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


/**
 * A hostile cache file per rule: a coordinator that starts during an outage probes what the file
 * lists, so a file another user could have written or swapped in is refused (named, with the
 * reason), and only a file of our own in a folder no one else may write is used.
 *
 * <p>Another owner is made two ways: by telling the cache that this process runs as {@code nobody}
 * (always; the owner rule itself), and, when the tests run as root, by really giving the file (or
 * the folder) to {@code nobody}. Without root a process cannot give a file away: those tests are
 * then reported as skipped, with that reason, and the first way still covers the rule.
 */
class CandidateCacheTrustTest {

    private static final Instant T = Instant.parse("2026-11-30T10:00:00Z");
    private static final WorkerEndpoint PLAIN = WorkerEndpoint.parse("grpc://10.0.0.7:7001");
    private static final WorkerEndpoint TLS = WorkerEndpoint.parse("grpcs://10.0.0.8:7443");

    @TempDir
    Path dir;
    private Path file;

    @BeforeEach
    void writeAGoodFile() throws IOException {
        assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"),
                "these rules are POSIX ones; elsewhere only links, the kind and the size are checked");
        file = dir.resolve("candidates");
        CandidateCache.write(file, Set.of(PLAIN, TLS), T);
    }

    private static Optional<CandidateCache.Loaded> load(CacheSettings settings, UserPrincipal us) {
        try (CandidateCache cache = new CandidateCache(settings, "trust", us)) {
            return cache.load(T).loaded();
        }
    }

    private Optional<CandidateCache.Loaded> load() {
        return load(new CacheSettings(file), null);
    }

    private String problem() throws IOException {
        return new CacheFileCheck(CoreKeys.CACHE_MAX_BYTES.defaultValue(), null).problem(file);
    }

    private static UserPrincipal user(String name) throws IOException {
        return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(name);
    }

    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    @Test
    void aFileOfOurOwnInAFolderOfOurOwnIsUsed() throws IOException {
        assertThat(problem()).isNull();
        assertThat(load()).hasValueSatisfying(l -> assertThat(l.candidates()).containsExactlyInAnyOrder(PLAIN, TLS));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .as("what the cache writes: only its user may read or write it").isEqualTo("rw-------");
    }

    @Test
    void aSymbolicLinkIsRefusedEvenToAGoodFile() throws IOException {
        Path real = dir.resolve("real");
        Files.move(file, real);
        Files.createSymbolicLink(file, real);

        assertThat(problem()).isEqualTo("it is a symbolic link (to " + real
                + "); the cache must be a regular file of its own");
        assertThat(load()).isEmpty();
    }

    @Test
    void aFolderIsNoCacheFile() throws IOException {
        Files.delete(file);
        Files.createDirectory(file);

        assertThat(problem()).isEqualTo("it is not a regular file (a folder)");
        assertThat(load()).isEmpty();
    }

    @Test
    void aFileLargerThanMaxBytesIsRefusedBeforeItIsRead() throws IOException {
        CacheSettings small = new CacheSettings(file,
                CoreKeys.CACHE_MAX_WAIT.defaultValue(), 1024, false, 100_000, CoreKeys.CACHE_MAX_AGE.defaultValue());
        Set<WorkerEndpoint> many = new HashSet<>();
        for (int port = 1; port <= 100; port++) {
            many.add(WorkerEndpoint.of("10.0.0.1", port));
        }
        CandidateCache.write(file, many, T);

        assertThat(new CacheFileCheck(1024, null).problem(file))
                .isEqualTo("it is " + Files.size(file) + " bytes, more than rollcall.discovery.cache.max-bytes (1024)");
        assertThat(load(small, null)).isEmpty();
    }

    @Test
    void aFileHoldingMoreThanMaxCandidatesIsRefused() {
        CacheSettings one = new CacheSettings(file,
                CoreKeys.CACHE_MAX_WAIT.defaultValue(), CoreKeys.CACHE_MAX_BYTES.defaultValue(), false, 1, CoreKeys.CACHE_MAX_AGE.defaultValue());
        assertThat(load(one, null)).isEmpty();
        assertThat(Assertions.catchThrowable(() -> CandidateCache.parse(readFile(), 1)))
                .hasMessage("it holds 2 candidates, more than rollcall.discovery.max-candidates (1)");
    }

    private String readFile() throws IOException {
        return Files.readString(file);
    }

    /** The owner rule, whoever runs the tests: the process says it is {@code nobody}, the file is the tests' user's. */
    @Test
    void aFileOfAnotherOwnerIsRefused() throws IOException {
        UserPrincipal nobody = user("nobody");
        UserPrincipal owner = Files.getOwner(file);

        assertThat(new CacheFileCheck(CoreKeys.CACHE_MAX_BYTES.defaultValue(), nobody).problem(file))
                .isEqualTo("it is owned by " + owner.getName() + ", not by nobody (the user of this process):"
                        + " another user may have written it");
        assertThat(load(new CacheSettings(file), nobody)).isEmpty();
    }

    /** The same with the real identity of this process: the file is given to {@code nobody}, which only root can do. */
    @Test
    void aFileGivenToAnotherUserIsRefused() throws IOException {
        assumeTrue(root(), "only root can give a file to another user; aFileOfAnotherOwnerIsRefused covers the rule");
        Files.setOwner(file, user("nobody"));

        assertThat(problem()).startsWith("it is owned by nobody, not by root (the user of this process)");
        assertThat(load()).isEmpty();
    }

    @Test
    void aFileItsGroupOrOthersMayWriteIsRefused() throws IOException {
        for (String mode : new String[] {"rw-rw----", "rw----rw-", "rw-rw-rw-"}) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            assertThat(problem()).as(mode).isEqualTo("its group or others may write it (" + mode
                    + "); chmod go-w it, or let Rollcall write it anew");
            assertThat(load()).as(mode).isEmpty();
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(load()).as("readable by others is no risk to us").isPresent();
    }

    @Test
    void aFolderOthersMayWriteIsRefusedUnlessItIsSticky() throws IOException {
        for (String mode : new String[] {"rwxrwxr-x", "rwx---rwx", "rwxrwxrwx"}) {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            assertThat(problem()).as(mode).isEqualTo("its folder " + dir + " may be written by another user (owner "
                    + Files.getOwner(dir).getName() + ", " + mode + ") and is not sticky: the file could be replaced"
                    + " at any time; keep the cache in a folder only this user may write");
            assertThat(load()).as(mode).isEmpty();
        }

        Files.setAttribute(dir, "unix:mode", 01777); // as /tmp: only a file's owner may rename or delete it
        assertThat(problem()).as("sticky, and the file is ours").isNull();
        assertThat(load()).isPresent();
    }

    /** In a sticky folder another user may still create the file first: it is theirs, and refused. */
    @Test
    void aFileAnotherUserPutInAStickyFolderIsRefused() throws IOException {
        assumeTrue(root(), "only root can give a file to another user; aFileOfAnotherOwnerIsRefused covers the rule");
        Files.setAttribute(dir, "unix:mode", 01777);
        Files.setOwner(file, user("nobody"));

        assertThat(problem()).startsWith("it is owned by nobody");
        assertThat(load()).isEmpty();
    }

    /** A folder of another user (not root) with only its owner's write bit: that user may replace our file. */
    @Test
    void aFolderOfAnotherUserIsRefused() throws IOException {
        assumeTrue(root(), "only root can give a folder to another user");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setOwner(dir, user("nobody"));

        assertThat(problem()).startsWith("its folder " + dir + " may be written by another user (owner nobody, rwxr-xr-x)");
        assertThat(load()).isEmpty();
    }

    @Test
    void requireTlsLeavesThePlaintextEndpointsOfTheFileOut() throws IOException {
        CacheSettings tlsOnly = new CacheSettings(file,
                CoreKeys.CACHE_MAX_WAIT.defaultValue(), CoreKeys.CACHE_MAX_BYTES.defaultValue(), true,
                100_000, CoreKeys.CACHE_MAX_AGE.defaultValue());
        assertThat(load(tlsOnly, null)).hasValueSatisfying(l -> assertThat(l.candidates()).containsExactly(TLS));

        CandidateCache.write(file, Set.of(PLAIN), T);
        assertThat(load(tlsOnly, null)).as("nothing left: as if there were no file").isEmpty();
        assertThat(load()).as("without require-tls").isPresent();
    }

    @Test
    void theKeysAreReadWithTheirDefaults() {
        CacheSettings defaults = CacheSettings.read(RollcallConfig.of(Map.of(
                "rollcall.discovery.cache.file", file.toString())).settings(), 5).orElseThrow();
        assertThat(defaults.maxBytes()).isEqualTo(64 << 20);
        assertThat(defaults.requireTls()).isFalse();
        assertThat(defaults.maxCandidates()).isEqualTo(5);
        assertThat(defaults.maxAge()).isEqualTo(Duration.ofDays(1));

        CacheSettings set = CacheSettings.read(RollcallConfig.of(Map.of(
                "rollcall.discovery.cache.file", file.toString(), "rollcall.discovery.cache.max-bytes", "4096",
                "rollcall.discovery.cache.require-tls", "true")).settings(), 5).orElseThrow();
        assertThat(set.maxBytes()).isEqualTo(4096);
        assertThat(set.requireTls()).isTrue();
    }

    @Test
    void maxAgeIsADurationAndZeroMeansAnyAge() throws IOException {
        CacheSettings any = CacheSettings.read(RollcallConfig.of(Map.of("rollcall.discovery.cache.file", file.toString(),
                "rollcall.discovery.cache.max-age", "0s")).settings(), 5).orElseThrow();
        assertThat(any.maxAge()).isZero();
        CandidateCache.write(file, Set.of(PLAIN), T);
        try (CandidateCache cache = new CandidateCache(any, "test")) {
            assertThat(cache.load(T.plus(Duration.ofDays(400))).loaded()).as("a year-old file, max-age 0s").isPresent();
        }
        assertThatThrownBy(() -> CacheSettings.read(RollcallConfig.of(Map.of("rollcall.discovery.cache.file",
                file.toString(), "rollcall.discovery.cache.max-age", "7")).settings(), 5))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.cache.max-age").hasMessageContaining("'7'");
    }
}
