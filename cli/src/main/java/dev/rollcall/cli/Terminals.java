package dev.rollcall.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether the process's standard output and error are terminals: a terminal gets redraws and
 * progress, a pipe or file gets plain lines (and no progress unless asked for).
 *
 * <p>Java cannot ask {@code isatty} directly. On Linux the answer is where {@code /proc/self/fd/N}
 * points ({@code /dev/pts/3}, {@code /dev/tty1}); elsewhere {@link System#console()} stands in for
 * both streams (on Java 17 it exists only when stdin and stdout are terminals). Immutable.
 *
 * @param stdout whether standard output is a terminal
 * @param stderr whether standard error is a terminal
 */
record Terminals(boolean stdout, boolean stderr) {

    /** Neither stream is a terminal: what in-process runs (tests) get. */
    static final Terminals NONE = new Terminals(false, false);

    /** Looks at this process's real file descriptors 1 and 2. */
    static Terminals detect() {
        Boolean out = procTerminal(1);
        Boolean err = procTerminal(2);
        if (out != null && err != null) {
            return new Terminals(out, err);
        }
        boolean console = System.console() != null;
        return new Terminals(console, console);
    }

    /** True or false on Linux; {@code null} where {@code /proc} does not say. */
    private static Boolean procTerminal(int fd) {
        Path link = Path.of("/proc/self/fd/" + fd);
        try {
            String target = Files.readSymbolicLink(link).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
    }
}
