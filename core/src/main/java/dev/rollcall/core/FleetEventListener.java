package dev.rollcall.core;

import dev.rollcall.api.registry.FleetEvent;

/**
 * Told about each {@link FleetEvent}: workers joining, leaving or rejected, cohort switches. Called
 * on the resolver's listener thread ({@code rollcall-listeners-<name>}), in snapshot order, after
 * the snapshot listeners of the same snapshot. An exception is logged and does not stop later
 * calls.
 */
@FunctionalInterface
public interface FleetEventListener {

    void onEvent(FleetEvent event);
}
