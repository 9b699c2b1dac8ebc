package dev.rollcall.testkit;

import dev.rollcall.api.internal.BrokenInvariants;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that fails a test during which an assertion failed inside a task of a
 * resolver's serial context. The resolver logs such a failure and goes on (one bad task must not
 * stop it), and the snapshot that task was building is dropped, so without this a broken invariant
 * (Rollcall checks its incremental snapshot builds with {@code assert}; tests run with {@code -ea})
 * leaves a test green.
 *
 * <p>Register it for a whole module: a file
 * {@code src/test/resources/META-INF/services/org.junit.jupiter.api.extension.Extension} holding
 * {@code dev.rollcall.testkit.NoFailedAssertions}, and
 * {@code junit.jupiter.extensions.autodetection.enabled=true} in
 * {@code src/test/resources/junit-platform.properties}; or per class with {@code @ExtendWith}.
 * Every module of Rollcall whose tests build resolvers does the former.
 *
 * <p>A failure is reported by the test it happened in, or by the class after its last test (a
 * resolver kept across tests, a task that failed after its test ended); one that comes later
 * still is reported by the next test that finishes, saying it may be late. Stateless: the errors
 * are kept by Rollcall's core, per process; tests that run in parallel may report each other's.
 */
public final class NoFailedAssertions implements AfterEachCallback, AfterAllCallback {

    @Override
    public void afterEach(ExtensionContext context) {
        check("this test");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        check("this class's tests");
    }

    private static void check(String when) {
        AssertionError failed = BrokenInvariants.take();
        if (failed != null) {
            throw new AssertionError("an assertion failed in a task of a resolver's serial context during " + when
                    + " (or late, after an earlier one): " + failed.getMessage(), failed);
        }
    }
}
