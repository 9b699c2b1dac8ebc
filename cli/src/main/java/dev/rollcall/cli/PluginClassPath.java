package dev.rollcall.cli;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The jars and class directories of {@code --classpath} (or {@code ROLLCALL_CLASSPATH}): a user's own
 * policies, discovery backends and their dependencies, found by the same {@code ServiceLoader} lookup
 * the library does. Entries are separated by the platform's path separator ({@code :} here); an entry
 * ending in {@code *} stands for every jar in that directory, as with {@code java -cp}.
 *
 * <p>The loader's parent is the command's own, so plugins see the Rollcall API the command runs.
 */
final class PluginClassPath {

    private PluginClassPath() {
    }

    /**
     * A class loader over {@code spec}'s entries, or the context class loader when {@code spec} is
     * blank.
     *
     * @throws IllegalArgumentException naming the entry that does not exist or is not a jar or directory
     */
    static ClassLoader loader(String spec) {
        ClassLoader parent = PluginClassPath.class.getClassLoader();
        if (spec == null || spec.isBlank()) {
            return parent;
        }
        List<URL> urls = new ArrayList<>();
        for (String entry : spec.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            if (entry.endsWith("*")) {
                Path dir = Path.of(entry.substring(0, entry.length() - 1).isEmpty() ? "."
                        : entry.substring(0, entry.length() - 1));
                if (!Files.isDirectory(dir)) {
                    throw new IllegalArgumentException("'" + entry + "': " + dir + " is not a directory");
                }
                try (Stream<Path> jars = Files.list(dir)) {
                    jars.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted()
                            .forEach(p -> urls.add(url(p)));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot list " + dir, e);
                }
                continue;
            }
            Path path = Path.of(entry);
            if (!Files.isDirectory(path) && !(Files.isRegularFile(path) && entry.endsWith(".jar"))) {
                throw new IllegalArgumentException("'" + entry + "': " + (Files.exists(path)
                        ? "neither a jar nor a directory" : "no such file (" + path.toAbsolutePath() + ")"));
            }
            urls.add(url(path));
        }
        return new URLClassLoader("rollcall-plugins", urls.toArray(URL[]::new), parent);
    }

    private static URL url(Path path) {
        try {
            return path.toAbsolutePath().toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException("'" + path + "': " + e.getMessage(), e);
        }
    }
}
