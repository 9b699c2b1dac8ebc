/** The gate's internals: wishes from verdicts, the patches, the rate-limited writer. Not an API. */
package dev.rollcall.kubernetes.gate.internal;
