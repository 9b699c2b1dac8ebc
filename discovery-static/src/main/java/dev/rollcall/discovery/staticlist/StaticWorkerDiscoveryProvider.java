package dev.rollcall.discovery.staticlist;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the {@code static} discovery backend ({@code rollcall.discovery.type=static}) from the
 * keys under {@code rollcall.discovery.static.}:
 *
 * <ul>
 *   <li>{@code endpoints}: comma-separated worker URLs, e.g. {@code grpc://h1:7001,grpcs://h2:7002};
 *   <li>{@code file}: a file with one worker URL per line, watched for changes;
 *   <li>{@code file.poll-interval}: how often the file is re-read in case a change event is missed
 *       (default and bound: {@link StaticKeys}).
 * </ul>
 *
 * <p>At least one of {@code endpoints} and {@code file} must be set; with both, the candidates are
 * their union.
 *
 * <p>Found by {@link java.util.ServiceLoader}. Stateless and thread-safe. {@link #create} reads and
 * checks every key and throws {@link ConfigurationException} naming the full key and the bad value
 * for any malformed one, including every malformed item of {@code endpoints}. It does not read the
 * file: a missing or bad file is a runtime condition reported through the listener, because the
 * file may legitimately appear or be fixed later.
 */
public final class StaticWorkerDiscoveryProvider implements WorkerDiscoveryProvider {

    private static final Logger LOG = LoggerFactory.getLogger(StaticWorkerDiscoveryProvider.class);

    static final String TYPE = "static";
    private static final int SCOPE = "rollcall.discovery.static.".length();
    static final String ENDPOINTS = StaticKeys.ENDPOINTS.name().substring(SCOPE);
    static final String FILE = StaticKeys.FILE.name().substring(SCOPE);
    static final String POLL_INTERVAL = StaticKeys.POLL_INTERVAL.name().substring(SCOPE);

    /** Needed by {@link java.util.ServiceLoader}. */
    public StaticWorkerDiscoveryProvider() {
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public WorkerDiscovery create(Settings settings) {
        // Read every key before judging any: core reports unread keys as unknown, and an early
        // throw would add a misleading "unknown key" complaint to the real error.
        List<String> items = settings.list(ENDPOINTS);
        Optional<String> fileText = settings.raw(FILE);
        Optional<String> pollText = settings.raw(POLL_INTERVAL);
        Duration pollInterval = settings.get(StaticKeys.POLL_INTERVAL);

        String endpointsKey = settings.fullKey(ENDPOINTS);
        String fileKey = settings.fullKey(FILE);
        String pollKey = settings.fullKey(POLL_INTERVAL);

        if (items.isEmpty() && fileText.isEmpty()) {
            throw new ConfigurationException(endpointsKey, "static discovery needs " + endpointsKey
                    + " (comma-separated worker URLs such as grpc://host1:7001,grpc://host2:7001) or "
                    + fileKey + " (a file with one worker URL per line), or both; neither is set");
        }
        Set<WorkerEndpoint> endpoints = parseEndpoints(endpointsKey, items);
        Path file = fileText.map(text -> toFile(fileKey, text)).orElse(null);

        if (file == null && pollText.isPresent()) {
            LOG.warn("{}={} has no effect because {} is not set", pollKey, pollText.get(), fileKey);
        }
        return new StaticWorkerDiscovery(endpoints, endpointsKey, file, fileKey, pollInterval);
    }

    /** Every malformed item in one message, so a user fixes the list in one go rather than one per restart. */
    private static Set<WorkerEndpoint> parseEndpoints(String key, List<String> items) {
        Set<WorkerEndpoint> endpoints = new LinkedHashSet<>();
        List<String> problems = new ArrayList<>();
        for (String item : items) {
            try {
                endpoints.add(WorkerEndpoint.parse(item));
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new ConfigurationException(key, key + " has " + problems.size()
                    + (problems.size() == 1 ? " malformed item: " : " malformed items: ")
                    + String.join("; ", problems)
                    + ". Expected comma-separated worker URLs such as grpc://host1:7001,grpcs://host2:7001");
        }
        return Collections.unmodifiableSet(endpoints);
    }

    private static Path toFile(String key, String text) {
        Path path;
        try {
            path = Path.of(text).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw ConfigurationException.invalid(key, text, "a file path (" + e.getReason() + ")");
        }
        // A missing file may still appear, but a directory is a mistake that no later event fixes.
        if (Files.isDirectory(path)) {
            throw ConfigurationException.invalid(key, text,
                    "a file with one worker URL per line, but " + path + " is a directory");
        }
        return path;
    }
}
