package dev.rollcall.core.planted.a;

import dev.rollcall.core.planted.b.Right;

/** Planted for {@code ArchitectureTest}: one half of a package cycle. */
public final class Left {

    Right right;
}
