package dev.rollcall.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScenarioWatchdogTest {

    @TempDir
    Path logs;

    @Test
    void aScenarioThatHangsIsAFailureThatSaysWhereAndTheRunGoesOn() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);

        ScenarioWatchdog.Outcome outcome = ScenarioWatchdog.run("3. probe economy", () -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        }, Duration.ofMillis(200), logs);

        assertThat(outcome.failure()).isInstanceOf(ScenarioWatchdog.Hung.class);
        assertThat(outcome.failure().toString()).startsWith("did not finish within 200.0 ms (hung) at ")
                .contains("ScenarioWatchdogTest.java:");
        Path dump = logs.resolve("hang-3-probe-economy.txt");
        assertThat(Files.readString(dump)).contains("\"scenario 3. probe economy\"", "CountDownLatch.await");
        interrupted.await(); // the scenario's thread was told to stop
    }

    @Test
    void aScenarioThatThrowsIsItsFailureAndOneThatReturnsHasNone() {
        IllegalStateException thrown = new IllegalStateException("etcd is not installed");
        assertThat(ScenarioWatchdog.run("4. propagation", () -> {
            throw thrown;
        }, Duration.ofSeconds(10), logs).failure()).isSameAs(thrown);
        assertThat(ScenarioWatchdog.run("1. read path", () -> { }, Duration.ofSeconds(10), logs).failure()).isNull();
    }
}
