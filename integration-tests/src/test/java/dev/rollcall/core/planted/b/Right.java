package dev.rollcall.core.planted.b;

import dev.rollcall.core.planted.a.Left;

/** Planted for {@code ArchitectureTest}: the other half of a package cycle. */
public final class Right {

    Left left;
}
