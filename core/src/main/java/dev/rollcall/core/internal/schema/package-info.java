/**
 * Service schemas: one fetch per worker version over gRPC server reflection ({@code SchemaFetcher}),
 * kept, retried and retired by {@code VersionSchemas}. Serial context, fetch answers hop to it.
 * Internal: not an API.
 */
package dev.rollcall.core.internal.schema;
