/**
 * Version policies that ship with Rollcall: {@code exact} ({@link dev.rollcall.policy.ExactVersionPolicy}),
 * {@code semver} ({@link dev.rollcall.policy.SemverRangePolicy}), {@code rollout}
 * ({@link dev.rollcall.policy.RolloutPolicy}, one version cohort at a time during an upgrade) and
 * {@code prefer} ({@link dev.rollcall.policy.PreferPolicy}, an ordered chain of ranges), registered
 * with {@link java.util.ServiceLoader} through their providers.
 */
package dev.rollcall.policy;
