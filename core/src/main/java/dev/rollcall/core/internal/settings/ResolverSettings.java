package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.registry.KeyPaths;
import dev.rollcall.core.internal.catalog.CoreKeys;

/**
 * Everything a resolver reads from its configuration (the builder's values its top layer), validated:
 * probing, schemas and keys, label rules, the candidate limit, the cache file and exact drain.
 * Names, defaults and bounds are {@link CoreKeys}'.
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

    public static final String EXACT_DRAIN_KEY = CoreKeys.EXACT_DRAIN.name();
    static final String KEEP_CHANNELS_KEY = CoreKeys.KEEP_CHANNELS.name();
    public static final String MAX_CANDIDATES_KEY = CoreKeys.MAX_CANDIDATES.name();

    /**
     * The settings of {@code config} (with the builder's values as its top layer); {@code keyPaths},
     * when not null, instead of {@code rollcall.keys.*}.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    public static ResolverSettings read(RollcallConfig config, KeyPaths keyPaths) {
        Settings root = config.settings();
        ProbeSettings probe = ProbeSettings.read(root.scope("rollcall.probe."));
        SchemaSettings schema = SchemaSettings.read(config, keyPaths);
        LabelSettings labels = LabelSettings.read(root);
        int candidates = root.get(CoreKeys.MAX_CANDIDATES);
        CacheSettings cache = CacheSettings.read(root, candidates).orElse(null);
        boolean exact = root.get(CoreKeys.EXACT_DRAIN);
        if (exact && !probe.keepChannels()) {
            // A release goes over the kept connection its stream lives on; without one there is no
            // stream to hold the worker, so the worker would fall back to its quiet period anyway.
            throw ConfigurationException.invalid(EXACT_DRAIN_KEY, "true", "false while " + KEEP_CHANNELS_KEY
                    + " is false (exact drain holds and releases workers over the kept connections;"
                    + " set " + KEEP_CHANNELS_KEY + "=true or " + EXACT_DRAIN_KEY + "=false)");
        }
        SubsetSettings subset = SubsetSettings.read(root).orElse(null);
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

}
