package dev.rollcall.benchmarks;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;

/**
 * How long after a publish a change must come to be published at once: two snapshot builds start
 * at least 1 / {@code rollcall.publish.max-rate} apart, so a change within that of the last publish
 * waits for the rest of the interval. Scenarios that time one change in a quiet fleet wait this
 * long after their own set-up's publish, as a drain that comes to a quiet fleet would. The rate is
 * the key's default, read from its declaration.
 */
final class QuietGap {

    private static final String MAX_RATE = "rollcall.publish.max-rate";

    private QuietGap() {
    }

    /** The default pacing interval plus a margin for the timer, in milliseconds. */
    static long millis() {
        for (SettingKey<?> key : KeyCatalog.all(QuietGap.class.getClassLoader())) {
            if (key.name().equals(MAX_RATE) && key.defaultValue() instanceof Integer rate) {
                return 1000 / rate + 10;
            }
        }
        throw new IllegalStateException(MAX_RATE + " is declared by no catalog on the class path");
    }

    /** Lets the pacing interval after the last publish run out. */
    static void await() throws InterruptedException {
        Thread.sleep(millis());
    }
}
