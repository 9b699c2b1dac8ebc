package dev.rollcall.conformance.planted;

import dev.rollcall.testkit.HostileText;

/** Planted for {@code ArchitectureTest}: the shipped conformance kit reaching into the testkit. */
public final class KitUsesTheTestkit {

    private KitUsesTheTestkit() {
    }

    static String forged() {
        return HostileText.forging("conform");
    }
}
