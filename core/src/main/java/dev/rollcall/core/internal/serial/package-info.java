/**
 * The resolver's one writer: {@code SerialContext} runs every state change on one thread, in order,
 * with the injected {@code Ticker} and {@code Scheduler} (grpc-java's {@code SynchronizationContext},
 * Caffeine's injectable time). Depends on nothing else of core. Internal: not an API.
 */
package dev.rollcall.core.internal.serial;
