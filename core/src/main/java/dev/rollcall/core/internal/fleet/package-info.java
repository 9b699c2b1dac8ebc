/**
 * The fleet as the resolver knows it: {@code FleetTracker} (the only code that changes it, on the
 * serial context), {@code TrackedWorker} (one candidate's state machine and flap damping, holding the
 * probe code's {@code ProbeSlot} and the snapshot code's {@code ShownState}), discovery's feed, and
 * the last-known-good candidate file. Uses the probe, snapshot and schema packages; none of them uses
 * this one. Internal: not an API.
 */
package dev.rollcall.core.internal.fleet;
