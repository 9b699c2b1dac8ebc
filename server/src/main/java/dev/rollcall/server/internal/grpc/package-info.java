/**
 * The gRPC port of {@code rollcall serve}: {@code rollcall.v1.FleetService} over one resolver.
 * {@link dev.rollcall.server.internal.grpc.FleetGrpcDoor} binds it with its doors (TLS, bearer token,
 * limits, keepalive); {@code FleetService} encodes each published snapshot once
 * ({@code SnapshotEncoder}) and serves the same bytes to every watcher (a slot each,
 * {@code FleetWatch}) and hold (a shared lease per number, {@code HeldSnapshots}). Not API.
 */
package dev.rollcall.server.internal.grpc;
