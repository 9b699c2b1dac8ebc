/**
 * Version policies that ship with Rollcall: {@code exact} ({@link dev.rollcall.policy.ExactVersionPolicy})
 * and {@code semver} ({@link dev.rollcall.policy.SemverRangePolicy}), registered with
 * {@link java.util.ServiceLoader} through their providers.
 */
package dev.rollcall.policy;
