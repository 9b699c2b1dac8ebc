package dev.rollcall.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.local.WorkerFleet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The extension bites: a test whose resolver breaks an assertion inside a serial task (here its
 * policy, which runs in the task that builds a snapshot) fails, though the test itself saw nothing
 * wrong; the same test with a sound policy passes. Each runs as a test of its own, through the
 * JUnit Platform launcher.
 */
class NoFailedAssertionsTest {

    @Test
    void aTestWhoseResolverBrokeAnAssertionInASerialTaskFails() {
        TestExecutionSummary summary = run(BrokenInvariant.class);

        assertThat(summary.getTestsSucceededCount()).isZero();
        assertThat(summary.getFailures()).singleElement().satisfies(f -> assertThat(f.getException())
                .hasMessageContaining("an assertion failed in a task of a resolver's serial context during this test")
                .hasMessageContaining("planted: the invariant does not hold"));
    }

    @Test
    void theSameTestWithASoundPolicyPasses() {
        TestExecutionSummary summary = run(SoundInvariant.class);

        assertThat(summary.getFailures()).isEmpty();
        assertThat(summary.getTestsSucceededCount()).isEqualTo(1);
    }

    private static TestExecutionSummary run(Class<?> testClass) {
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build(), listener);
        return listener.getSummary();
    }

    /** Resolves one worker with {@code policy}, waits until the policy was asked, and closes the resolver. */
    static void resolveOnce(VersionPolicy policy, CountDownLatch asked) throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.0.0");
             PushDiscovery discovery = new PushDiscovery();
             WorkerResolver resolver = WorkerResolver.builder().discovery(discovery).policy(policy).build()) {
            discovery.push(List.of(fleet.worker(0).endpoint()));
            assertThat(asked.await(30, TimeUnit.SECONDS)).as("the policy was asked").isTrue();
            // close() runs a task on the serial context after the one that asked the policy: once it
            // returns, that task is over (and its failure recorded).
        }
    }

    /** A policy run inside the serial task that builds a snapshot: asked once, it breaks an assertion. */
    private static VersionPolicy policy(CountDownLatch asked, boolean broken) {
        return new VersionPolicy() {
            @Override
            public Verdict check(WorkerInfo worker) {
                asked.countDown();
                if (broken) {
                    throw new AssertionError("planted: the invariant does not hold");
                }
                return Verdict.accept();
            }

            @Override
            public String description() {
                return broken ? "broken" : "sound";
            }
        };
    }

    @ExtendWith(NoFailedAssertions.class)
    static class BrokenInvariant {
        @Test
        void looksFine() throws Exception {
            CountDownLatch asked = new CountDownLatch(1);
            resolveOnce(policy(asked, true), asked);
        }
    }

    @ExtendWith(NoFailedAssertions.class)
    static class SoundInvariant {
        @Test
        void looksFine() throws Exception {
            CountDownLatch asked = new CountDownLatch(1);
            resolveOnce(policy(asked, false), asked);
        }
    }
}
