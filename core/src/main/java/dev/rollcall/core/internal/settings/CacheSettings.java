package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.catalog.CoreKeys;
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
    public static final String MAX_BYTES_KEY = CoreKeys.CACHE_MAX_BYTES.name();
    public static final String REQUIRE_TLS_KEY = CoreKeys.CACHE_REQUIRE_TLS.name();
    public static final String MAX_AGE_KEY = CoreKeys.CACHE_MAX_AGE.name();

    /** With the defaults but the file: for tests. */
    public CacheSettings(Path file) {
        this(file, CoreKeys.CACHE_MAX_WAIT.defaultValue(), CoreKeys.CACHE_MAX_BYTES.defaultValue(), false,
                CoreKeys.MAX_CANDIDATES.defaultValue(), CoreKeys.CACHE_MAX_AGE.defaultValue());
    }

    /** The settings, or empty when no cache file is configured. */
    public static Optional<CacheSettings> read(Settings root, int maxCandidates) {
        Optional<String> file = root.find(CoreKeys.CACHE_FILE);
        Duration maxWait = root.get(CoreKeys.CACHE_MAX_WAIT);
        int maxBytes = root.get(CoreKeys.CACHE_MAX_BYTES);
        boolean requireTls = root.get(CoreKeys.CACHE_REQUIRE_TLS);
        Duration maxAge = root.get(CoreKeys.CACHE_MAX_AGE);
        if (file.isEmpty() || file.get().isBlank()) {
            return Optional.empty();
        }
        Path path = Path.of(file.get());
        Path folder = path.toAbsolutePath().getParent();
        if (folder == null || !Files.isDirectory(folder)) {
            throw ConfigurationException.invalid(CoreKeys.CACHE_FILE.name(), file.get(),
                    "a file in an existing folder (" + folder + " is not one)");
        }
        return Optional.of(new CacheSettings(path, maxWait, maxBytes, requireTls, maxCandidates, maxAge));
    }
}
