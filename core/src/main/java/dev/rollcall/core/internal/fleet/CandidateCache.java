package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.CacheSettings;
import dev.rollcall.core.internal.settings.DurationText;
import dev.rollcall.core.internal.settings.ResolverSettings;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last candidate set a discovery backend delivered, kept in a file
 * ({@code rollcall.discovery.cache.file}) for a coordinator that starts while its backend is down,
 * as Dubbo and Eureka keep theirs. Written when the set changes, atomically (a temporary file in the
 * same folder, fsync, rename), on a thread of its own ({@code rollcall-cache-<name>}) so that the
 * resolver never waits for a disk; only the newest set is written.
 *
 * <p>The format is text, one endpoint a line with its labels, closed by a line with the count and a
 * CRC-32 of everything before it, so that a truncated, corrupt or foreign file is recognised and
 * ignored (with one WARN naming it), never half used:
 * <pre>
 * rollcall-candidates 1
 * written 2026-11-30T10:00:00Z
 * grpc://10.0.0.7:7001 zone=eu-1&amp;env=prod
 * end 1 8f3a2c11
 * </pre>
 *
 * <p>The file is trusted only as far as {@link CacheFileCheck} allows (ours, not a link, not
 * writable by others, in a folder no other user may write unless sticky, at most
 * {@code rollcall.discovery.cache.max-bytes}) and holds at most {@code rollcall.discovery.max-candidates}
 * endpoints, and is not started from once older than {@code rollcall.discovery.cache.max-age}; with
 * {@code rollcall.discovery.cache.require-tls} its plaintext ({@code grpc://}) endpoints are left
 * out. A refused file is named in one WARN with the reason, and not used.
 */
public final class CandidateCache implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CandidateCache.class);
    static final String MAGIC = "rollcall-candidates 1";


    /** A set read back, and when it was written. */
    record Loaded(Set<WorkerEndpoint> candidates, Instant writtenAt) {
    }

    /** What the file gives a starting resolver: a set to start from, or why none (one line). */
    record Start(Optional<Loaded> loaded, String problem) {
        static Start of(Loaded loaded) {
            return new Start(Optional.of(loaded), null);
        }

        static Start none(String problem) {
            return new Start(Optional.empty(), problem);
        }
    }

    private final CacheSettings settings;
    private final Path file;
    private final CacheFileCheck check;
    private final ExecutorService writer;
    private final AtomicReference<Set<WorkerEndpoint>> pending = new AtomicReference<>();
    private Set<WorkerEndpoint> offered;        // the last set offered; on the serial context
    private Set<WorkerEndpoint> written;        // the last set written; on the writer thread

    public CandidateCache(CacheSettings settings, String name) {
        this(settings, name, null);
    }

    /** @param us the process's user, for tests that pretend to be another; null: the real one */
    public CandidateCache(CacheSettings settings, String name, UserPrincipal us) {
        this.settings = settings;
        this.file = settings.file();
        this.check = new CacheFileCheck(settings.maxBytes(), us);
        this.writer = Executors.newSingleThreadExecutor(NamedThreads.daemon("rollcall-cache-" + name));
    }

    Path file() {
        return file;
    }

    /** The backend delivered {@code latest}: write it, unless it is the set written last. */
    void offer(Set<WorkerEndpoint> latest) {
        if (latest.equals(offered)) {
            return;
        }
        offered = latest;
        if (pending.getAndSet(latest) == null) {
            try {
                writer.execute(this::writeLatest);
            } catch (RejectedExecutionException closed) {
                log.debug("candidate cache {} closed; not written", file);
            }
        }
    }

    private void writeLatest() {
        Set<WorkerEndpoint> latest = pending.getAndSet(null);
        if (latest == null || latest.equals(written)) {
            return;
        }
        try {
            write(file, latest, Instant.now());
            written = latest;
        } catch (IOException | RuntimeException e) {
            log.warn("cannot write the candidate cache {}: {}{}", file, e.toString(), whyNotOurs());
        }
    }

    /** Why the file there is not one we may use, after a write failed: often the reason it failed (another user's file). */
    private String whyNotOurs() {
        try {
            String problem = check.problem(file);
            return problem == null ? "" : " (the file there is refused: " + problem + ")";
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** Writes {@code candidates} to {@code file} atomically: a reader sees the old file or the new one. */
    static void write(Path file, Set<WorkerEndpoint> candidates, Instant now) throws IOException {
        write(file, candidates, now, () -> { });
    }

    /** What happens once half of a new file is written: nothing, but a test makes the write fail there, or reads. */
    interface HalfWritten {
        void reached() throws IOException;
    }

    /** As {@link #write(Path, Set, Instant)}, calling {@code halfWritten} when half the bytes are on their way. */
    static void write(Path file, Set<WorkerEndpoint> candidates, Instant now, HalfWritten halfWritten)
            throws IOException {
        String text = render(candidates, now);
        Path folder = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(folder, file.getFileName().toString(), ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                byte[] all = text.getBytes(StandardCharsets.UTF_8);
                writeFully(ch, ByteBuffer.wrap(all, 0, all.length / 2));
                halfWritten.reached();
                writeFully(ch, ByteBuffer.wrap(all, all.length / 2, all.length - all.length / 2));
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** The file's text for {@code candidates}, written at {@code now}: what {@link #parse} reads back. */
    static String render(Set<WorkerEndpoint> candidates, Instant now) {
        StringBuilder text = new StringBuilder(MAGIC).append('\n').append("written ").append(now).append('\n');
        Map<String, WorkerEndpoint> byUrl = new TreeMap<>();
        candidates.forEach(e -> byUrl.put(e.url(), e));
        for (WorkerEndpoint e : byUrl.values()) {
            text.append(e.url());
            if (!e.labels().isEmpty()) {
                List<String> pairs = new ArrayList<>();
                new TreeMap<>(e.labels()).forEach((k, v) -> pairs.add(encode(k) + "=" + encode(v)));
                text.append(' ').append(String.join("&", pairs));
            }
            text.append('\n');
        }
        String checksum = crc(text.toString());
        text.append("end ").append(byUrl.size()).append(' ').append(checksum).append('\n');
        return text.toString();
    }

    private static void writeFully(FileChannel ch, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            ch.write(bytes);
        }
    }

    /**
     * The set in the file, or none (with one WARN naming the file and what is wrong, and the same
     * reason in the result) when it is missing, unreadable, truncated, corrupt, not such a file, or
     * refused: not one this process may trust ({@link CacheFileCheck}), larger than
     * {@code max-bytes}, more endpoints than {@code max-candidates}, written longer than
     * {@code max-age} before {@code now}, or nothing left once plaintext endpoints are left out under
     * {@code require-tls}.
     */
    Start load(Instant now) {
        Loaded loaded;
        try {
            String refused = check.problem(file);
            if (refused != null) {
                log.warn("candidate cache {} refused: {}; starting without candidates", file, refused);
                return Start.none("refused: " + refused);
            }
            loaded = parse(read(file, settings.maxBytes()), settings.maxCandidates());
        } catch (NoSuchFileException e) {
            log.warn("candidate cache {} does not exist; starting without candidates", file);
            return Start.none("it does not exist");
        } catch (IOException | IllegalArgumentException e) {
            log.warn("candidate cache {} ignored: {}", file, e.getMessage());
            return Start.none(e.getMessage());
        }
        String tooOld = tooOld(loaded.writtenAt(), now);
        if (tooOld != null) {
            log.warn("candidate cache {} ignored: {}; starting without candidates", file, tooOld);
            return Start.none(tooOld);
        }
        if (!settings.requireTls()) {
            return Start.of(loaded);
        }
        Set<WorkerEndpoint> tls = loaded.candidates().stream().filter(WorkerEndpoint::tls)
                .collect(Collectors.toUnmodifiableSet());
        int plaintext = loaded.candidates().size() - tls.size();
        if (plaintext > 0) {
            log.warn("candidate cache {}: {} plaintext (grpc://) endpoint{} left out, as {} is true{}", file, plaintext,
                    plaintext == 1 ? "" : "s", CacheSettings.REQUIRE_TLS_KEY, tls.isEmpty() ? "; starting without candidates" : "");
        }
        return tls.isEmpty() ? Start.none("only plaintext endpoints, and " + CacheSettings.REQUIRE_TLS_KEY + " is true")
                : Start.of(new Loaded(tls, loaded.writtenAt()));
    }

    /** Why a file written at {@code writtenAt} is too old to start from at {@code now}, or null. */
    private String tooOld(Instant writtenAt, Instant now) {
        Duration maxAge = settings.maxAge();
        Duration age = Duration.between(writtenAt, now);
        // A file dated ahead of this clock (another host's clock, or ours set back) counts as new.
        if (maxAge.isZero() || age.compareTo(maxAge) <= 0) {
            return null;
        }
        return "written " + writtenAt + ", " + DurationText.of(age) + " ago, longer than "
                + CacheSettings.MAX_AGE_KEY + " (" + DurationText.of(maxAge) + ")";
    }

    /** The file's text, reading at most {@code maxBytes} (and refusing it, should it have grown past them since it was checked). */
    private static String read(Path file, int maxBytes) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes(maxBytes + 1);
        }
        if (bytes.length > maxBytes) {
            throw new IllegalArgumentException("it is more than " + CacheSettings.MAX_BYTES_KEY + " (" + maxBytes + ") bytes");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** {@link #parse(String, int)} with the default {@code max-candidates}. */
    static Loaded parse(String text) {
        return parse(text, CoreKeys.MAX_CANDIDATES.defaultValue());
    }

    /** @throws IllegalArgumentException saying what is wrong with {@code text} */
    static Loaded parse(String text, int maxCandidates) {
        if (!text.startsWith(MAGIC + "\n")) {
            throw new IllegalArgumentException("not a Rollcall candidate cache (its first line is not '" + MAGIC + "')");
        }
        int endLine = text.lastIndexOf("\nend ");
        if (endLine < 0 || !text.endsWith("\n")) {
            throw new IllegalArgumentException("truncated: no closing 'end' line");
        }
        String body = text.substring(0, endLine + 1);
        String[] end = text.substring(endLine + 1, text.length() - 1).split(" ");
        if (end.length != 3 || !end[2].equals(crc(body))) {
            throw new IllegalArgumentException("corrupt: its checksum does not match");
        }
        if (end[1].isEmpty() || end[1].length() > 9 || !end[1].chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("corrupt: its 'end' line holds no count");
        }
        if (Integer.parseInt(end[1]) > maxCandidates) {
            throw new IllegalArgumentException("it holds " + end[1] + " candidates, more than "
                    + ResolverSettings.MAX_CANDIDATES_KEY + " (" + maxCandidates + ")");
        }
        List<String> lines = List.of(body.split("\n"));
        if (lines.size() < 2 || !lines.get(1).startsWith("written ")) {
            throw new IllegalArgumentException("corrupt: no 'written' line");
        }
        Instant writtenAt;
        try {
            writtenAt = Instant.parse(lines.get(1).substring("written ".length()));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("corrupt: 'written' is not an instant");
        }
        Set<WorkerEndpoint> candidates = new LinkedHashSet<>();
        Set<String> urls = new LinkedHashSet<>();
        for (String line : lines.subList(2, lines.size())) {
            int space = line.indexOf(' ');
            WorkerEndpoint e = WorkerEndpoint.parse(space < 0 ? line : line.substring(0, space));
            // render() writes each URL once: two lines of one URL are not a file it wrote, and would
            // hand the resolver two labellings of one worker.
            if (!urls.add(e.url())) {
                throw new IllegalArgumentException("corrupt: " + e.url() + " is on two lines");
            }
            if (space >= 0) {
                Map<String, String> labels = new LinkedHashMap<>();
                for (String pair : line.substring(space + 1).split("&")) {
                    int eq = pair.indexOf('=');
                    if (eq < 0) {
                        throw new IllegalArgumentException("corrupt: a label without '=' on the line of " + e.url());
                    }
                    labels.put(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
                }
                e = e.withLabels(labels);
            }
            candidates.add(e);
        }
        if (!end[1].equals(String.valueOf(candidates.size()))) {
            throw new IllegalArgumentException("corrupt: it says " + end[1] + " endpoints and holds " + candidates.size());
        }
        return new Loaded(Set.copyOf(candidates), writtenAt);
    }

    private static String crc(String s) {
        CRC32 crc = new CRC32();
        crc.update(s.getBytes(StandardCharsets.UTF_8));
        return Long.toHexString(crc.getValue());
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** @throws IllegalArgumentException naming the text (escaped) when it is not URL-encoded */
    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // URLDecoder's own message quotes the text raw, and it is logged.
            throw new IllegalArgumentException("corrupt: label text '" + PeerText.escape(s, 64) + "' is not URL-encoded");
        }
    }

    /** Lets a pending write finish (up to 5 s) and stops the writer thread. */
    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writer.shutdownNow();
    }
}
