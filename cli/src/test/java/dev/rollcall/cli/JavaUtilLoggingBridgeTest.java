package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The command owns its process, so java.util.logging (jetcd, gRPC, Guava) goes through SLF4J: one
 * format and one set of levels, never JUL's own two-line {@code SEVERE:} records on stderr.
 */
class JavaUtilLoggingBridgeTest {

    @Test
    void aJavaUtilLoggingRecordComesOutThroughSlf4jOnceBridged() {
        Logger root = Logger.getLogger("");
        Handler[] originalHandlers = root.getHandlers();
        PrintStream originalErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));   // slf4j-simple and JUL's console
        try {
            LoggingOptions.bridgeJavaUtilLogging();
            LoggingOptions.bridgeJavaUtilLogging();      // idempotent: one record stays one line

            Logger.getLogger("io.etcd.jetcd.example").severe("scheduled resume failed");
        } finally {
            System.setErr(originalErr);
            SLF4JBridgeHandler.uninstall();
            for (Handler h : originalHandlers) {
                root.addHandler(h);
            }
        }
        String printed = err.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("ERROR").contains("example - scheduled resume failed")
                .doesNotContain("SEVERE");
        assertThat(printed.lines().filter(l -> l.contains("scheduled resume failed"))).hasSize(1);
    }
}
