/**
 * The user's calls to workers: the {@code rollcall:} target and what its channels ask of the resolver
 * ({@code CallPath}, the {@code LiveResolvers.Handle} the gRPC module sees), shared channels and the
 * executor of their callbacks, and the interceptor that reports failed calls to the tracker. Any
 * thread; changes to the fleet hop to the serial context. Internal: not an API.
 */
package dev.rollcall.core.internal.calls;
