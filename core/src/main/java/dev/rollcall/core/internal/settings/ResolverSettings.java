package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;

/**
 * Everything a resolver reads from its configuration and the overrides given in code, validated:
 * probing, schemas and keys, label rules, the candidate limit, the cache file and exact drain.
 * Overrides win; the defaults are in each part's constants and in core's README.
 *
 * @param cache      the cache file's settings, or {@code null} when none is configured
 * @param exactDrain {@code rollcall.drain.exact}: hold workers only under leases and release them
 * @param subset     {@code rollcall.subset.*}, or {@code null} when subsets are off
 * @param publish    {@code rollcall.publish.*}: how often snapshots may be published
 */
public record ResolverSettings(ProbeSettings probe, SchemaSettings schema, LabelSettings labels, int maxCandidates,
                        CacheSettings cache, boolean exactDrain, SubsetSettings subset, PublishSettings publish) {

    /** Settings with the default publish rate. */
    public ResolverSettings(ProbeSettings probe, SchemaSettings schema, LabelSettings labels, int maxCandidates,
                            CacheSettings cache, boolean exactDrain, SubsetSettings subset) {
        this(probe, schema, labels, maxCandidates, cache, exactDrain, subset, PublishSettings.DEFAULTS);
    }

    /** Settings without subsets. */
    public ResolverSettings(ProbeSettings probe, SchemaSettings schema, LabelSettings labels, int maxCandidates,
                            CacheSettings cache, boolean exactDrain) {
        this(probe, schema, labels, maxCandidates, cache, exactDrain, null);
    }

    public static final String EXACT_DRAIN_KEY = "rollcall.drain.exact";
    static final String KEEP_CHANNELS_KEY = "rollcall.probe.keep-channels";

    public static final String MAX_CANDIDATES_KEY = "rollcall.discovery.max-candidates";
    /**
     * Ten times the largest compute fleets we know of (a Kubernetes cluster supports 5,000 to
     * 15,000 nodes; engines rarely run more than 10,000 executors), small enough that a set at the
     * limit is probed within a minute on a 2-core coordinator and its tracked state is tens of
     * megabytes. Core's README gives the figures.
     */
    public static final int DEFAULT_MAX_CANDIDATES = 100_000;
    static final int MOST_MAX_CANDIDATES = 10_000_000;

    /**
     * The settings of {@code config}, where {@code overrides}, when set, win.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    public static ResolverSettings read(RollcallConfig config, ResolverOverrides overrides) {
        Settings root = config.settings();
        ProbeSettings probe = ProbeSettings.read(root.scope("rollcall.probe."), overrides);
        SchemaSettings schema = SchemaSettings.read(config, overrides);
        LabelSettings labels = LabelSettings.read(root, overrides);
        int candidates = maxCandidates(root, overrides.maxCandidates());
        CacheSettings cache = CacheSettings.read(root, candidates).orElse(null);
        boolean exact = overrides.exactDrain() != null ? overrides.exactDrain() : root.bool(EXACT_DRAIN_KEY, false);
        if (exact && !probe.keepChannels()) {
            // A release goes over the kept connection its stream lives on; without one there is no
            // stream to hold the worker, so the worker would fall back to its quiet period anyway.
            throw ConfigurationException.invalid(EXACT_DRAIN_KEY, "true", "false while " + KEEP_CHANNELS_KEY
                    + " is false (exact drain holds and releases workers over the kept connections;"
                    + " set " + KEEP_CHANNELS_KEY + "=true or " + EXACT_DRAIN_KEY + "=false)");
        }
        SubsetSettings subset = SubsetSettings.read(root, overrides.subsetSize(), overrides.coordinatorId())
                .orElse(null);
        if (exact && subset != null) {
            // A worker demoted out of the subset closes its kept connection, and with it the stream that
            // holds it: exact drain would have to keep it open until the leases that saw it close.
            throw ConfigurationException.invalid(EXACT_DRAIN_KEY, "true", "false while " + SubsetSettings.SIZE_KEY
                    + " is set (" + subset.size() + "): exact drain does not follow workers leaving the subset yet;"
                    + " unset " + SubsetSettings.SIZE_KEY + " or set " + EXACT_DRAIN_KEY + "=false");
        }
        return new ResolverSettings(probe, schema, labels, candidates, cache, exact, subset,
                PublishSettings.read(root));
    }

    /** {@code rollcall.discovery.max-candidates}, or {@code set} when the builder gave one. */
    public static int maxCandidates(Settings root, Integer set) {
        return set != null ? set : root.integer(MAX_CANDIDATES_KEY, DEFAULT_MAX_CANDIDATES, 1, MOST_MAX_CANDIDATES);
    }
}
