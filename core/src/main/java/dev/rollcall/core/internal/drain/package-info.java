/**
 * Exact drain, the coordinator's side ({@code rollcall.drain.exact}): {@link
 * dev.rollcall.core.internal.drain.LeaseTable} counts the open leases of each published snapshot,
 * {@link dev.rollcall.core.internal.drain.DrainReleases} decides when a draining worker is let go and
 * sends {@code ReleaseWorker} ({@link dev.rollcall.core.internal.drain.ReleaseCall}). Internal: not an
 * API.
 */
package dev.rollcall.core.internal.drain;
