package dev.rollcall.core;

import java.time.Duration;

/** The resolver's tunables, validated by the builder. */
record ResolverOptions(Duration probeTimeout, int probeConcurrency, Duration backoffInitial, Duration backoffMax,
                       Duration refreshInterval, boolean keepChannels, int maxResponseBytes) {
}
