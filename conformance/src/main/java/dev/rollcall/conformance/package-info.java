/**
 * Checks of the {@code rollcall.v1} protocol for workers in any language: {@link
 * dev.rollcall.conformance.WorkerConformance} checks a running worker from outside against
 * the rules of {@code docs/protocol.md}; {@link dev.rollcall.conformance.ProtocolCompatibility}
 * compares a descriptor of the protocol with an earlier one and names every breaking change.
 */
package dev.rollcall.conformance;
