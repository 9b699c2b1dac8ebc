package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.List;
import java.util.Optional;

/**
 * Creates an {@link ExactVersionPolicy} for {@code rollcall.policy.type=exact}.
 *
 * <p>Keys, relative to {@code rollcall.policy.exact.}: {@code version} (one version) or
 * {@code versions} (a comma-separated list); exactly one of the two must be set. Values are
 * stripped, so the empty version cannot be configured here (see {@link ExactVersionPolicy#of}).
 *
 * <p>Stateless and thread-safe. {@link #create} reads both keys and throws a
 * {@link ConfigurationException} naming the key at fault when neither or both are set, when
 * {@code version} holds a comma, or when {@code versions} lists nothing.
 */
public final class ExactVersionPolicyProvider implements VersionPolicyProvider {

    /** Needed by {@link java.util.ServiceLoader}. */
    public ExactVersionPolicyProvider() {
    }

    @Override
    public String type() {
        return "exact";
    }

    @Override
    public VersionPolicy create(Settings settings) {
        Optional<String> single = settings.raw("version");
        Optional<String> several = settings.raw("versions");
        String singleKey = settings.fullKey("version");
        String severalKey = settings.fullKey("versions");
        if (single.isPresent() && several.isPresent()) {
            throw new ConfigurationException(severalKey,
                    singleKey + " and " + severalKey + " are both set: set only one of them");
        }
        if (single.isPresent()) {
            // A comma here almost always means a list put under the wrong key; taken literally it
            // would match no worker at all.
            if (single.get().contains(",")) {
                throw ConfigurationException.invalid(singleKey, single.get(),
                        "one version; put a comma-separated list in " + severalKey);
            }
            return ExactVersionPolicy.of(single.get());
        }
        if (several.isPresent()) {
            List<String> versions = settings.list("versions");
            if (versions.isEmpty()) {
                throw ConfigurationException.invalid(severalKey, several.get(),
                        "a comma-separated list of versions such as 1.4.0,1.4.1");
            }
            return ExactVersionPolicy.of(versions);
        }
        throw ConfigurationException.missing(singleKey,
                "a version such as 1.4.0, or a comma-separated list in " + severalKey);
    }
}
