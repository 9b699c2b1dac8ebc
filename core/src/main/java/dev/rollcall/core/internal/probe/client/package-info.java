/**
 * The gRPC client of {@code rollcall.v1.WorkerService}: {@code ProbeClient} (channels on one small
 * event loop, the {@code WorkerInfo} and {@code WatchWorkerInfo} calls), the channels it builds
 * ({@code ProbeChannels}, with {@code OpenSockets} counting their sockets) and the calls it makes
 * ({@code WorkerInfoCalls}). A package of its own below {@code probe}: the probe scheduler, the
 * protocols and the schema fetcher all use it, and it uses none of them. Thread-safe; callbacks on
 * network threads. Internal: not an API.
 */
package dev.rollcall.core.internal.probe.client;
