package dev.rollcall.discovery.consul;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Captures everything logged while it is open: our SLF4J output (slf4j-simple writes to whatever
 * {@code System.err} is at each call) and, at the most verbose level, java.util.logging, where
 * consul-api logs each request at FINEST and Apache HttpClient (through commons-logging) logs
 * requests, headers and wire data at FINE.
 */
final class LogCapture implements AutoCloseable {

    private static final String[] JUL_LOGGERS = {"com.ecwid", "org.apache.http"};

    private final PrintStream originalErr = System.err;
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<String> julRecords = new ArrayList<>();
    private final List<Logger> loggers = new ArrayList<>();     // strong references: JUL keeps weak ones
    private final List<Level> levels = new ArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            String message = record.getMessage();
            if (record.getParameters() != null) {
                message = message + " " + java.util.Arrays.toString(record.getParameters());
            }
            synchronized (julRecords) {
                julRecords.add(record.getLoggerName() + " " + record.getLevel() + " " + message);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    LogCapture() {
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        handler.setLevel(Level.ALL);
        for (String name : JUL_LOGGERS) {
            Logger logger = Logger.getLogger(name);
            loggers.add(logger);
            levels.add(logger.getLevel());
            logger.setLevel(Level.ALL);
            logger.addHandler(handler);
        }
    }

    /** Everything captured so far, SLF4J first, then java.util.logging. */
    String text() {
        synchronized (julRecords) {
            return err.toString(StandardCharsets.UTF_8) + String.join("\n", julRecords);
        }
    }

    /** How many java.util.logging records came (to show the verbose loggers were really on). */
    int julRecordCount() {
        synchronized (julRecords) {
            return julRecords.size();
        }
    }

    @Override
    public void close() {
        System.setErr(originalErr);
        for (int i = 0; i < loggers.size(); i++) {
            loggers.get(i).removeHandler(handler);
            loggers.get(i).setLevel(levels.get(i));
        }
        originalErr.print(err.toString(StandardCharsets.UTF_8));    // keep it in the test's output file
    }
}
