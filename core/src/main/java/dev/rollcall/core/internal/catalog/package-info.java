/**
 * The declarations of the keys core reads ({@link dev.rollcall.core.internal.catalog.CoreKeys}): a
 * leaf package that every reader may use without a cycle. Internal: not an API.
 */
package dev.rollcall.core.internal.catalog;
