package dev.rollcall.worker;

import java.time.Duration;

/**
 * The part of {@link RollcallWorker.Builder} that bounds what a client of the port can make the
 * worker hold, and how long it lets work finish: one method per {@code rollcall.worker.*} key, each
 * overriding it. Package-private (as core's resolver builder base): users see these methods on
 * {@link RollcallWorker.Builder}. Not thread-safe.
 */
abstract class WorkerLimitsBuilder {

    final WorkerOptions o = new WorkerOptions();

    /** This builder, as the type users hold. */
    abstract RollcallWorker.Builder self();

        /**
         * The largest request message of Rollcall's own calls ({@code WorkerInfo},
         * {@code WatchWorkerInfo}) and of gRPC reflection, in bytes; overrides
         * {@code rollcall.worker.max-request-bytes} (default 4096; their requests are a few bytes).
         * A larger one is refused with {@code RESOURCE_EXHAUSTED} after that many bytes, never read
         * whole. Arrow Flight and your services keep no limit of Rollcall's (record batches are big).
         */
        public RollcallWorker.Builder maxRequestBytes(int max) {
            o.maxRequestBytes = WorkerOptions.atLeast("maxRequestBytes", max, 64);
            return self();
        }

        /**
         * The most {@code WatchWorkerInfo} streams served at once in all; overrides
         * {@code rollcall.worker.max-watches} (default 1024). See {@link WorkerInfoService.Builder#maxWatches}.
         */
        public RollcallWorker.Builder maxWatches(int max) {
            o.maxWatches = WorkerOptions.atLeast("maxWatches", max, 1);
            return self();
        }

        /**
         * The most {@code WatchWorkerInfo} streams served at once over one connection; overrides
         * {@code rollcall.worker.max-watches-per-connection} (default 16).
         */
        public RollcallWorker.Builder maxWatchesPerConnection(int max) {
            o.maxWatchesPerConnection = WorkerOptions.atLeast("maxWatchesPerConnection", max, 1);
            return self();
        }

        /**
         * The most calls of any kind (Flight, yours, Rollcall's) open at once on one connection, the
         * HTTP/2 {@code SETTINGS_MAX_CONCURRENT_STREAMS} the server announces; overrides
         * {@code rollcall.worker.max-calls-per-connection} (default 250, as Go's HTTP/2 server). A gRPC client holds a call
         * past it until another ends; a client that ignores the setting has the stream refused.
         */
        public RollcallWorker.Builder maxCallsPerConnection(int max) {
            o.maxCallsPerConnection = WorkerOptions.atLeast("maxCallsPerConnection", max, 1);
            return self();
        }

        /**
         * After draining, {@link RollcallWorker#close()} waits until none of the work in flight is left
         * and neither a call started nor (when coordinators watch it) the drain was announced for this long, at most
         * {@code shutdown-grace}: queries that planned on this worker just before it drained still reach
         * it ({@code rollcall.worker.drain-quiet}, default 500 ms).
         */
        public RollcallWorker.Builder drainQuiet(Duration quiet) {
            o.drainQuietMillis = WorkerOptions.millis("drainQuiet", quiet);
            return self();
        }

        /** How long {@link RollcallWorker#close()} lets in-flight calls finish; default 5 s. */
        public RollcallWorker.Builder shutdownGrace(Duration grace) {
            o.shutdownGraceMillis = WorkerOptions.millis("shutdownGrace", grace);
            return self();
        }
}
