package dev.rollcall.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.slf4j.LoggerFactory;

/**
 * Copies what is written to {@code System.out} and {@code System.err} while it is open, still
 * letting it through: enough to read slf4j-simple's log lines, which it writes to whichever stream
 * is current at each call. With any other SLF4J binding the log does not pass through here:
 * {@link #seesLogs()} says whether it does. For tests of what a component logs (a WARN that must
 * name an entry, a peer's text that must arrive escaped):
 *
 * <pre>{@code
 * try (ConsoleCapture console = new ConsoleCapture()) {
 *     ...
 *     assertThat(console.text()).contains("skipping");
 * }
 * }</pre>
 *
 * <p>Thread-safe; one at a time per JVM (it replaces the console streams while open).
 */
public final class ConsoleCapture implements AutoCloseable {

    private final PrintStream originalOut = System.out;
    private final PrintStream originalErr = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    public ConsoleCapture() {
        System.setOut(new PrintStream(new Tee(originalOut), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new Tee(originalErr), true, StandardCharsets.UTF_8));
    }

    /** Whether SLF4J logs to the console streams (slf4j-simple), so that {@link #text()} holds the log. */
    public static boolean seesLogs() {
        return LoggerFactory.getILoggerFactory().getClass().getName().startsWith("org.slf4j.simple.");
    }

    /** Everything written so far. */
    public String text() {
        synchronized (copy) {
            return copy.toString(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        System.setOut(originalOut);
        System.setErr(originalErr);
    }

    private final class Tee extends OutputStream {
        private final OutputStream through;

        Tee(OutputStream through) {
            this.through = through;
        }

        @Override
        public void write(int b) {
            synchronized (copy) {
                copy.write(b);
            }
            try {
                through.write(b);
            } catch (java.io.IOException e) {
                // the console is gone; the copy is what matters here
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (copy) {
                copy.write(b, off, len);
            }
            try {
                through.write(b, off, len);
            } catch (java.io.IOException e) {
                // as above
            }
        }

        @Override
        public void flush() {
            try {
                through.flush();
            } catch (java.io.IOException e) {
                // as above
            }
        }
    }
}
