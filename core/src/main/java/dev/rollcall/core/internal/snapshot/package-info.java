/**
 * From the tracked workers to what readers see: {@code SnapshotBuilder} (the policy's verdicts, schema
 * hold-back, builds of what changed over {@code ShownFleet}), the per-worker {@code ShownState} only
 * it writes, {@code PublishPacer} (when a build runs), {@code SnapshotFanOut} (the current snapshot,
 * awaiters, listeners on threads of their own), the live read views and the label preference.
 * Knows a worker only as a {@code ShownWorker}. Internal: not an API.
 */
package dev.rollcall.core.internal.snapshot;
