package dev.rollcall.api.internal;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The first {@link AssertionError} thrown by a task of a resolver's serial context since it was last
 * {@link #take taken}. A task's failure is logged and the context goes on (one bad task must not stop
 * a resolver), so an invariant checked with {@code assert} inside a task (a snapshot built from the
 * workers that changed against one built from them all) would break unseen; tests look here after
 * each test instead, through the testkit's {@code NoFailedAssertions} extension (core's own tests
 * through their copy of it).
 *
 * <p>Internal: the hook between core and the test extensions, not part of Rollcall's API. Nothing is
 * kept in production but the first such error, if a task ever throws one (assertions are off there).
 * Thread-safe.
 */
public final class BrokenInvariants {

    private static final AtomicReference<AssertionError> FIRST = new AtomicReference<>();

    private BrokenInvariants() {
    }

    /** Keeps {@code broken} unless an earlier one is waiting to be taken. */
    public static void record(AssertionError broken) {
        FIRST.compareAndSet(null, broken);
    }

    /** The first error recorded since the last call, or null; forgets it. */
    public static AssertionError take() {
        return FIRST.getAndSet(null);
    }
}
