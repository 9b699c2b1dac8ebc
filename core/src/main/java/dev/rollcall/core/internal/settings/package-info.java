/**
 * What a resolver is told: the validated {@code rollcall.probe.*}, {@code rollcall.schemas.*},
 * {@code rollcall.keys.*}, label and {@code rollcall.discovery.*} settings, read from the configuration
 * and from {@code ResolverOverrides}, the plain record of what the builder was given (never from the
 * builder itself). Read at build time; immutable records after. Internal: not an API.
 */
package dev.rollcall.core.internal.settings;
