package dev.rollcall.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The file that {@code rollcall.discovery.static.file} points at, edited the way a deployment tool
 * would: the whole file is rewritten and renamed over the old one, so the watcher never reads half a
 * list.
 *
 * <p>Not thread-safe; the demo's main thread is its only user.
 */
final class WorkersFile {

    private final Path file;
    private final List<String> urls = new ArrayList<>();

    WorkersFile(Path file) {
        this.file = file;
    }

    Path path() {
        return file;
    }

    /** Writes the file listing {@code initial}. */
    void write(List<String> initial) {
        urls.clear();
        urls.addAll(initial);
        save();
    }

    /** Adds a line for {@code url}. */
    void add(String url) {
        urls.add(url);
        save();
    }

    /** Removes {@code url}'s line. */
    void remove(String url) {
        if (!urls.remove(url)) {
            throw new IllegalArgumentException(url + " is not in " + file);
        }
        save();
    }

    /** The file's content as written. */
    String content() {
        StringBuilder sb = new StringBuilder("# Workers of the rollcall demo: one URL per line.\n");
        urls.forEach(u -> sb.append(u).append('\n'));
        return sb.toString();
    }

    private void save() {
        // The temporary file sits next to the target: a rename is atomic only within one file system.
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, content(), StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
