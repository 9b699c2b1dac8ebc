/**
 * When and how workers are probed: {@code ProbeScheduler} (queue, concurrency limit, retries,
 * refreshes, kept links and their streams), the per-worker {@code ProbeSlot} only it writes, the
 * {@code ProbeTransport} it probes over (real gRPC channels, faked in unit tests) and
 * {@code StreamLiveness}, which notices streams gone silent. Knows a worker only as a
 * {@code ProbeTarget}. Serial context, network callbacks hop to it. Internal: not an API.
 */
package dev.rollcall.core.internal.probe;
