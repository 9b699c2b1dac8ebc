package dev.rollcall.local.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Cleaning up after a real server run on loopback ({@link ServerProcess}, and the testkit's
 * in-process {@code ZooKeeperServer}): its temporary directory and its JVM shutdown hook. Best
 * effort: never throws. Stateless, thread-safe. Internal: for rollcall-local and rollcall-testkit.
 */
public final class ServerCleanup {

    private ServerCleanup() {
    }

    /** Deletes {@code root} and everything under it, as far as it can: a leftover temporary directory is harmless. */
    public static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    // Best effort, as above.
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // Best effort, as above.
        }
    }

    /** Takes back a cleanup hook once the server was closed by hand. */
    public static void removeShutdownHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is shutting down: the hook runs (or ran) anyway.
        }
    }
}
