/**
 * One resolver's verdicts served to coordinators in any language: {@link dev.rollcall.server.FleetServer}
 * ({@code rollcall.v1.FleetService} over gRPC; {@code /readyz}, {@code /healthz}, {@code /metrics} and
 * the console over HTTP) and its keys, {@link dev.rollcall.server.ServerKeys}. Everything under
 * {@code internal} is its machinery.
 */
package dev.rollcall.server;
