package dev.rollcall.cli;

import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Option;

/**
 * {@code -v/--verbose}, shared by every subcommand through {@code @Mixin}.
 *
 * <p>slf4j-simple is configured through system properties. Its global settings are read once, when
 * the first logger is created, so {@link #configureDefaults()} runs at the start of {@code main};
 * a per-package level is read when each logger is created, and Rollcall's loggers are created when
 * its classes are first used, so {@link #apply()} at the start of a subcommand is still in time.
 * A value already given with {@code -D} always wins.
 */
final class LoggingOptions {

    private static final String PREFIX = "org.slf4j.simpleLogger.";

    @Option(names = {"-v", "--verbose"}, description = "Also log what Rollcall decides (INFO) to stderr.")
    boolean verbose;

    /** Quiet by default: the commands' own output tells the story; warnings and errors still show. */
    static void configureDefaults() {
        setIfAbsent("defaultLogLevel", "warn");
        setIfAbsent("showThreadName", "false");
        setIfAbsent("showShortLogName", "true");
        setIfAbsent("levelInBrackets", "true");
        // While ZooKeeper is unreachable its client logs a WARN with a stack trace on every reconnect
        // attempt, about once a second; the zookeeper backend reports the outage itself, once.
        setIfAbsent("log.org.apache.zookeeper.ClientCnxn", "error");
        // Curator logs each operation that fails while disconnected as an ERROR with a stack trace.
        setIfAbsent("log.org.apache.curator.framework.imps.CuratorFrameworkImpl", "off");
        setIfAbsent("log.org.apache.curator.ConnectionState", "off");
    }

    /** Turns on Rollcall's INFO logs when {@code --verbose} was given. */
    void apply() {
        if (verbose) {
            setIfAbsent("log.dev.rollcall", "info");
        }
    }

    /**
     * Sends java.util.logging (jetcd, parts of gRPC, Guava) through SLF4J, so that it obeys the same
     * levels and format instead of printing its own two-line records. JUL's own levels still filter
     * first (INFO and above, by default).
     */
    static void bridgeJavaUtilLogging() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(PREFIX + key) == null) {
            System.setProperty(PREFIX + key, value);
        }
    }
}
