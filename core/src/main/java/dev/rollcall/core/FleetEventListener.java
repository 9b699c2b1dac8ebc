package dev.rollcall.core;

import dev.rollcall.api.registry.FleetEvent;

/**
 * Told about each {@link FleetEvent}: workers joining, leaving or rejected, cohort switches. Called
 * on a thread of the listener's own ({@code rollcall-listeners-<name>-N}), in snapshot order. A slow
 * listener delays only itself; when several snapshots came while it was busy, it gets the events
 * from the last one it was given to the newest. An exception is logged and does not stop later
 * calls.
 */
@FunctionalInterface
public interface FleetEventListener {

    void onEvent(FleetEvent event);
}
