/**
 * The bridge to {@code rollcall-grpc} ({@code LiveResolvers}, and {@code ProbeClient}'s failure text
 * for its connection check) and the probe client every part of core shares: channels on one event
 * loop, the {@code WorkerInfo} calls, TLS. The resolver's machinery lives in the packages below,
 * one per job. Internal: not an API; anything here may change.
 */
package dev.rollcall.core.internal;
