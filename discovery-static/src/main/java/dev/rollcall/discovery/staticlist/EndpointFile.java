package dev.rollcall.discovery.staticlist;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads and parses an endpoint file: one worker URL per line, {@code #} starts a comment (whole
 * line or trailing), blank lines are ignored. Stateless; safe from any thread.
 */
final class EndpointFile {

    private static final Logger LOG = LoggerFactory.getLogger(EndpointFile.class);

    /**
     * Far beyond any real worker list (tens of thousands of lines). Guards against a path pointing
     * at a log file or {@code /dev/zero}, which would otherwise exhaust the heap.
     */
    static final int MAX_BYTES = 1 << 20;

    private EndpointFile() {
    }

    /** The parsed endpoints, in file order, and how many lines were skipped as malformed. */
    record Parsed(Set<WorkerEndpoint> endpoints, int skipped) {
    }

    /** The raw bytes of {@code file}; comparing bytes lets the caller skip re-parsing (and re-logging) an unchanged file. */
    static byte[] read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw new IOException("it is larger than " + MAX_BYTES + " bytes, too large for a list of workers");
            }
            return bytes;
        }
    }

    /**
     * Parses {@code content} read from {@code source}. A malformed line is skipped with a WARN naming
     * the file, the line number and the reason; it never costs the good lines.
     */
    static Parsed parse(Path source, byte[] content) {
        // Decoding replaces invalid UTF-8 instead of failing, so a stray byte costs one line (which
        // WorkerEndpoint.parse then rejects as non-ASCII), not the whole file.
        String text = new String(content, StandardCharsets.UTF_8);
        if (text.startsWith("\uFEFF")) {
            // Some Windows editors write a byte-order mark; it would spoil the first endpoint.
            text = text.substring(1);
        }
        Set<WorkerEndpoint> endpoints = new LinkedHashSet<>();
        int skipped = 0;
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String item = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (item.isEmpty()) {
                continue;
            }
            try {
                endpoints.add(WorkerEndpoint.parse(item));
            } catch (IllegalArgumentException e) {
                skipped++;
                // The line is the file's, not ours: escaped, so that it cannot forge a log line or move a cursor.
                LOG.warn("{}:{}: skipping malformed line, keeping the others: {}", source, i + 1,
                        PeerText.escape(e.getMessage()));
            }
        }
        return new Parsed(Collections.unmodifiableSet(endpoints), skipped);
    }
}
