package dev.rollcall.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {

    @Test
    void aPortIsHandedOutOncePerJvmSoOneKeptFreeForALaterWorkerIsNotGivenToAnother() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            // 2,000 random draws from a 12,000-port span would repeat about 160 times by chance alone.
            assertThat(seen.add(LoopbackPorts.free())).as("draw %d", i).isTrue();
        }
    }
}
