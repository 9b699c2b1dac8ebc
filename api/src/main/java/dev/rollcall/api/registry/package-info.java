/**
 * Read-only, feature-scoped views of what Rollcall knows about the fleet. Every view answers from
 * one immutable {@link dev.rollcall.api.registry.FleetSnapshot}; there is no write method here: the
 * resolver in {@code rollcall-core} is the only writer.
 *
 * <p>The schema views ({@link dev.rollcall.api.registry.ProtoSymbols},
 * {@link dev.rollcall.api.registry.KeyExtractors}) need {@code protobuf-java}, an optional dependency
 * of this module that every resolver user has through {@code rollcall-core};
 * {@link dev.rollcall.api.registry.KeyRouting} needs nothing; JSON mapping is implemented in
 * {@code rollcall-schema-json}.
 */
package dev.rollcall.api.registry;
