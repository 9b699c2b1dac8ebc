/**
 * What core's internal packages and {@code rollcall-grpc} stand on: the bridge to
 * {@code rollcall-grpc} ({@code LiveResolvers}), the words for a failed probe ({@code ProbeFailures},
 * also {@code rollcall-grpc}'s connection check) and the probes' TLS material ({@code ProbeTls}). It
 * depends on none of the packages below it (the architecture test says so); the resolver's
 * machinery lives there, one package per job. Internal: not an API; anything here may change.
 */
package dev.rollcall.core.internal;
