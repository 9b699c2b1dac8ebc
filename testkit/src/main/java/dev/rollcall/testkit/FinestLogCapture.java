package dev.rollcall.testkit;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * Captures everything logged while it is open, at the most verbose level there is: SLF4J through
 * slf4j-simple (every logger, existing and new, turned to TRACE; it writes to whatever
 * {@code System.err} is at each call) and java.util.logging at ALL from the root (gRPC,
 * consul-api, Apache HttpClient through commons-logging), with each record's parameters and
 * stack trace. {@link #close()} puts the levels and {@code System.err} back.
 *
 * <p>slf4j-simple reads its levels once per logger, and this JVM runs other test classes before
 * this one: the levels are changed on the logger objects themselves (by reflection, slf4j-simple
 * has no API for it), so the capture does not depend on which test ran first.
 *
 * <p>For tests that search what was logged (a secret that must not appear, a control character a
 * peer sent that must arrive escaped). One capture open at a time per JVM: it swaps global state
 * ({@code System.err}, the root JUL logger's level). Its methods are thread-safe; anything logged on
 * any thread while it is open is captured. Needs slf4j-simple as the SLF4J binding (it says so at
 * construction otherwise).
 */
public final class FinestLogCapture implements AutoCloseable {

    private static final int TRACE = 0;

    private final PrintStream originalErr = System.err;
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<String> julRecords = new ArrayList<>();
    private final Logger julRoot = Logger.getLogger("");
    private final Level julRootLevel = julRoot.getLevel();
    private final Map<Object, Integer> slf4jLevels = new IdentityHashMap<>();
    private Object simpleConfig;
    private int simpleDefaultLevel;
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            StringBuilder line = new StringBuilder(record.getLoggerName() + " " + record.getLevel() + " "
                    + record.getMessage());
            if (record.getParameters() != null) {
                for (Object p : record.getParameters()) {
                    line.append(" | ").append(p);
                }
            }
            if (record.getThrown() != null) {
                line.append('\n').append(stackTrace(record.getThrown()));
            }
            synchronized (julRecords) {
                julRecords.add(line.toString());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    /** Starts capturing, at once. */
    public FinestLogCapture() {
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        handler.setLevel(Level.ALL);
        julRoot.setLevel(Level.ALL);
        julRoot.addHandler(handler);
        slf4jToTrace();
    }

    private void slf4jToTrace() {
        LoggerFactory.getLogger(FinestLogCapture.class).trace("initialising slf4j-simple");
        try {
            Class<?> simpleLogger = Class.forName("org.slf4j.simple.SimpleLogger");
            Field configField = accessible(simpleLogger.getDeclaredField("CONFIG_PARAMS"));
            simpleConfig = configField.get(null);
            Field defaultLevel = accessible(simpleConfig.getClass().getDeclaredField("defaultLogLevel"));
            simpleDefaultLevel = defaultLevel.getInt(simpleConfig);
            defaultLevel.setInt(simpleConfig, TRACE);
            Object factory = LoggerFactory.getILoggerFactory();
            Map<?, ?> loggers = (Map<?, ?>) accessible(factory.getClass().getDeclaredField("loggerMap")).get(factory);
            Field level = accessible(simpleLogger.getDeclaredField("currentLogLevel"));
            for (Object logger : loggers.values()) {
                slf4jLevels.put(logger, level.getInt(logger));
                level.setInt(logger, TRACE);
            }
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("cannot turn slf4j-simple to TRACE (is it the SLF4J binding?): " + e, e);
        }
    }

    private static Field accessible(Field f) {
        f.setAccessible(true);
        return f;
    }

    /** Everything captured so far: SLF4J's output, then java.util.logging's records. */
    public String text() {
        synchronized (julRecords) {
            return err.toString(StandardCharsets.UTF_8) + "\n" + String.join("\n", julRecords);
        }
    }

    /** How many java.util.logging records were captured so far. */
    public int julRecordCount() {
        synchronized (julRecords) {
            return julRecords.size();
        }
    }

    private static String stackTrace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    /** Stops capturing and puts the levels and {@code System.err} back. */
    @Override
    public void close() {
        julRoot.removeHandler(handler);
        julRoot.setLevel(julRootLevel);
        try {
            Class<?> simpleLogger = Class.forName("org.slf4j.simple.SimpleLogger");
            Field level = accessible(simpleLogger.getDeclaredField("currentLogLevel"));
            accessible(simpleConfig.getClass().getDeclaredField("defaultLogLevel")).setInt(simpleConfig,
                    simpleDefaultLevel);
            Object factory = LoggerFactory.getILoggerFactory();
            Map<?, ?> loggers = (Map<?, ?>) accessible(factory.getClass().getDeclaredField("loggerMap")).get(factory);
            for (Object logger : loggers.values()) {
                level.setInt(logger, slf4jLevels.getOrDefault(logger, simpleDefaultLevel));
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        } finally {
            System.setErr(originalErr);
        }
    }
}
