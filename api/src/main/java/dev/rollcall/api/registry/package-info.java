/**
 * Read-only, feature-scoped views of what Rollcall knows about the fleet. Every view answers from
 * one immutable {@link dev.rollcall.api.registry.FleetSnapshot}; there is no write method here: the
 * resolver in {@code rollcall-core} is the only writer.
 */
package dev.rollcall.api.registry;
