/**
 * What users and extension authors compile against: the value types ({@link
 * dev.rollcall.api.WorkerEndpoint}, {@link dev.rollcall.api.WorkerInfo}), typed {@link
 * dev.rollcall.api.Settings}, and, in sub-packages, the discovery and policy SPIs and the read-only
 * registry views. This module has no runtime dependencies: a custom backend or policy needs nothing
 * else on its compile path.
 */
package dev.rollcall.api;
