package dev.rollcall.core.internal;

import dev.rollcall.core.internal.serial.SerialContext;

/** Planted for {@code ArchitectureTest}: core's internal root reaching down into a package below it. */
public final class PlantedRootReachesDown {

    private PlantedRootReachesDown() {
    }

    static Class<?> below() {
        return SerialContext.class;
    }
}
