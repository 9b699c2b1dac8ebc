package dev.rollcall.core;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test in which an assertion failed inside a task of a resolver's serial context (such a
 * task's failure is only logged, so that the context goes on): for example a snapshot built from
 * the workers that changed that differs from one built by reading them all. Registered for every
 * test of this module (META-INF/services, autodetection in junit-platform.properties).
 */
public final class NoFailedAssertions implements BeforeEachCallback, AfterEachCallback {

    @Override
    public void beforeEach(ExtensionContext context) {
        SerialContext.failedAssertion = null;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        AssertionError failed = SerialContext.failedAssertion;
        SerialContext.failedAssertion = null;
        if (failed != null) {
            throw new AssertionError("an assertion failed in a task of a serial context: " + failed.getMessage(), failed);
        }
    }
}
