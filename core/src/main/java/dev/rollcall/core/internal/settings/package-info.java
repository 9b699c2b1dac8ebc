/**
 * What a resolver is told: the validated {@code rollcall.probe.*}, {@code rollcall.schemas.*},
 * {@code rollcall.keys.*}, label and {@code rollcall.discovery.*} settings, read from one source: the
 * configuration, with what the builder was given ({@link dev.rollcall.core.internal.settings.BuilderValues})
 * as its top layer. Each key is declared once, in {@link dev.rollcall.core.internal.catalog.CoreKeys}.
 * Read at build time; immutable records after. Internal: not an API.
 */
package dev.rollcall.core.internal.settings;
