package dev.rollcall.core;

import dev.rollcall.api.internal.BrokenInvariants;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test in which an assertion failed inside a task of a resolver's serial context (such a
 * task's failure is only logged, so that the context goes on): for example a snapshot built from
 * the workers that changed that differs from one built by reading them all. Registered for every
 * test of this module (META-INF/services, autodetection in junit-platform.properties). Core's copy
 * of the testkit's {@code dev.rollcall.testkit.NoFailedAssertions}, which core's tests cannot use
 * (the testkit depends on core).
 */
public final class NoFailedAssertions implements AfterEachCallback, AfterAllCallback {

    @Override
    public void afterEach(ExtensionContext context) {
        check("this test");
    }

    /** Resolvers a class keeps across its tests, and tasks that fail after a test ended. */
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
