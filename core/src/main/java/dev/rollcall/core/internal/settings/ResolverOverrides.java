package dev.rollcall.core.internal.settings;

import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.api.registry.KeyPaths;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings given in code ({@code WorkerResolver.builder()}), each {@code null} when not given:
 * then the configuration's value, or the default, applies. A plain record, so that the settings
 * readers need nothing of the builder that collects it. {@link Draft} collects and checks them.
 */
public record ResolverOverrides(Duration probeTimeout, Integer probeConcurrency, Duration backoffInitial,
                         Duration backoffMax, Duration refreshInterval, Boolean keepChannels,
                         Duration keepaliveTime, Duration keepaliveTimeout, Integer maxResponseBytes,
                         Integer maxCandidates, Path tlsCa, Path tlsCert, Path tlsKey, String tlsAuthority,
                         Boolean fetchSchemas, KeyPaths keyPaths, LabelSelector selector,
                         LabelSelector preferLabels, int preferMinWorkers, Boolean exactDrain,
                         String probeProtocol, Integer maxKeptChannels, Integer subsetSize,
                         String coordinatorId) {

    /** Nothing given in code. */
    static final ResolverOverrides NONE = new Draft().done();

    /**
     * Collects overrides, checking each argument at once and naming it (Caffeine's builders do the
     * same); {@link #done()} is the record. Not thread-safe.
     */
    public static final class Draft {
        private Duration probeTimeout;
        private Integer probeConcurrency;
        private Duration backoffInitial;
        private Duration backoffMax;
        private Duration refreshInterval;
        private Boolean keepChannels;
        private Duration keepaliveTime;
        private Duration keepaliveTimeout;
        private Integer maxResponseBytes;
        private Integer maxCandidates;
        private Path tlsCa;
        private Path tlsCert;
        private Path tlsKey;
        private String tlsAuthority;
        private Boolean fetchSchemas;
        private KeyPaths keyPaths;
        private LabelSelector selector;
        private LabelSelector preferLabels;
        private int preferMinWorkers;
        private Boolean exactDrain;
        private String probeProtocol;
        private Integer maxKeptChannels;
        private Integer subsetSize;
        private String coordinatorId;

        public Draft probeTimeout(Duration timeout) {
            probeTimeout = positive(timeout, "probeTimeout");
            return this;
        }

        public Draft probeConcurrency(int concurrency) {
            probeConcurrency = atLeast(concurrency, 1, "probeConcurrency");
            return this;
        }

        public Draft backoff(Duration initial, Duration max) {
            positive(initial, "backoff initial");
            positive(max, "backoff max");
            if (max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff max " + max + " is below backoff initial " + initial);
            }
            backoffInitial = initial;
            backoffMax = max;
            return this;
        }

        public Draft refreshInterval(Duration interval) {
            refreshInterval = positive(interval, "refreshInterval");
            return this;
        }

        public Draft keepChannels(boolean keep) {
            keepChannels = keep;
            return this;
        }

        /** At most {@code max} kept channels; 0 only with {@code keepChannels(false)} (checked at build). */
        public Draft maxKeptChannels(int max) {
            maxKeptChannels = atLeast(max, 0, "maxKeptChannels");
            return this;
        }

        public Draft subsetSize(int size) {
            subsetSize = atLeast(size, 1, "subsetSize");
            return this;
        }

        public Draft coordinatorId(String id) {
            Objects.requireNonNull(id, "coordinatorId");
            if (id.isBlank()) {
                throw new IllegalArgumentException("coordinatorId is blank");
            }
            coordinatorId = id.strip();
            return this;
        }

        public Draft keepalive(Duration time, Duration timeout) {
            Objects.requireNonNull(time, "keepalive time");
            Objects.requireNonNull(timeout, "keepalive timeout");
            if (time.compareTo(ProbeSettings.MIN_KEEPALIVE_TIME) < 0) {
                throw new IllegalArgumentException("keepalive time " + time + " is below 1 s (workers grant"
                        + " heartbeats of 1 s at least)");
            }
            if (timeout.compareTo(ProbeSettings.MIN_KEEPALIVE_TIMEOUT) < 0) {
                throw new IllegalArgumentException("keepalive timeout " + timeout + " is below 100 ms");
            }
            keepaliveTime = time;
            keepaliveTimeout = timeout;
            return this;
        }

        public Draft maxResponseBytes(int bytes) {
            maxResponseBytes = atLeast(bytes, ProbeSettings.MIN_RESPONSE_BYTES, "maxResponseBytes");
            return this;
        }

        public Draft maxCandidates(int max) {
            maxCandidates = atLeast(max, 1, "maxCandidates");
            return this;
        }

        public Draft probeTrust(Path caPemFile) {
            tlsCa = Objects.requireNonNull(caPemFile, "caPemFile");
            return this;
        }

        public Draft probeClientCertificate(Path certificateChainPemFile, Path privateKeyPemFile) {
            tlsCert = Objects.requireNonNull(certificateChainPemFile, "certificateChainPemFile");
            tlsKey = Objects.requireNonNull(privateKeyPemFile, "privateKeyPemFile");
            return this;
        }

        public Draft probeAuthority(String authority) {
            tlsAuthority = Objects.requireNonNull(authority, "authority");
            return this;
        }

        public Draft fetchSchemas(boolean fetch) {
            fetchSchemas = fetch;
            return this;
        }

        /** @throws IllegalArgumentException naming the position and what was expected there */
        public Draft selector(String text) {
            selector = LabelSelector.parse(Objects.requireNonNull(text, "selector"));
            return this;
        }

        /** @throws IllegalArgumentException naming the position and what was expected, or a {@code minWorkers} below 1 */
        public Draft preferLabels(String text, int minWorkers) {
            atLeast(minWorkers, 1, "preferLabels minWorkers");
            preferLabels = LabelSelector.parse(Objects.requireNonNull(text, "selector"));
            preferMinWorkers = minWorkers;
            return this;
        }

        public Draft exactDrain(boolean exact) {
            exactDrain = exact;
            return this;
        }

        public Draft keyPaths(KeyPaths keys) {
            keyPaths = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /** The probe protocol's name; checked against the providers found when the resolver is built. */
        public Draft probeProtocol(String name) {
            Objects.requireNonNull(name, "probeProtocol");
            if (name.isBlank()) {
                throw new IllegalArgumentException("probeProtocol is blank");
            }
            probeProtocol = name;
            return this;
        }

        /** The overrides given so far. */
        public ResolverOverrides done() {
            return new ResolverOverrides(probeTimeout, probeConcurrency, backoffInitial, backoffMax, refreshInterval,
                    keepChannels, keepaliveTime, keepaliveTimeout, maxResponseBytes, maxCandidates, tlsCa, tlsCert,
                    tlsKey, tlsAuthority, fetchSchemas, keyPaths, selector, preferLabels, preferMinWorkers, exactDrain,
                    probeProtocol, maxKeptChannels, subsetSize, coordinatorId);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(what + " " + d + " is not positive");
            }
            return d;
        }

        private static int atLeast(int value, int min, String what) {
            if (value < min) {
                throw new IllegalArgumentException(what + " " + value + " is below " + min);
            }
            return value;
        }
    }
}
