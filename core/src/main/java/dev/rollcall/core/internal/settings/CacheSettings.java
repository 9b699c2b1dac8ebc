package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * {@code rollcall.discovery.cache.*}: where, how long to wait for the backend before using it,
 * how large the file may be, whether plaintext endpoints from it are refused, how old it may be
 * ({@code maxAge}; zero: any age); and
 * {@code rollcall.discovery.max-candidates}, which bounds the file as it bounds discovery's sets.
 */
public record CacheSettings(Path file, Duration maxWait, int maxBytes, boolean requireTls, int maxCandidates,
                            Duration maxAge) {
    public static final String MAX_BYTES_KEY = "rollcall.discovery.cache.max-bytes";
    public static final String REQUIRE_TLS_KEY = "rollcall.discovery.cache.require-tls";
    public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(3);
    /** 100,000 endpoints with three labels each (zone, node, instance id) are about 13 MB. */
    public static final int DEFAULT_MAX_BYTES = 64 << 20;
    public static final String MAX_AGE_KEY = "rollcall.discovery.cache.max-age";
    /**
     * Long enough to start through a registry outage of a working day, with the candidates of the
     * fleet as it was that morning; short enough that a file from last week's fleet (its addresses
     * reused, its claimed versions no longer true) is never started from.
     */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofDays(1);

    /** With the defaults but the file: for tests. */
    public CacheSettings(Path file) {
        this(file, DEFAULT_MAX_WAIT, DEFAULT_MAX_BYTES, false, ResolverSettings.DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_AGE);
    }

    /** The settings, or empty when no cache file is configured. */
    public static Optional<CacheSettings> read(Settings root, int maxCandidates) {
        Optional<String> file = root.raw("rollcall.discovery.cache.file");
        Duration maxWait = root.positiveDuration("rollcall.discovery.cache.max-wait", DEFAULT_MAX_WAIT);
        int maxBytes = root.integer(MAX_BYTES_KEY, DEFAULT_MAX_BYTES, 1024, Integer.MAX_VALUE - 8);
        boolean requireTls = root.bool(REQUIRE_TLS_KEY, false);
        Duration maxAge = root.duration(MAX_AGE_KEY, DEFAULT_MAX_AGE);
        if (file.isEmpty() || file.get().isBlank()) {
            return Optional.empty();
        }
        Path path = Path.of(file.get());
        Path folder = path.toAbsolutePath().getParent();
        if (folder == null || !Files.isDirectory(folder)) {
            throw ConfigurationException.invalid("rollcall.discovery.cache.file", file.get(),
                    "a file in an existing folder (" + folder + " is not one)");
        }
        return Optional.of(new CacheSettings(path, maxWait, maxBytes, requireTls, maxCandidates, maxAge));
    }
}
