package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Creates an {@link ExactVersionPolicy} for {@code rollcall.policy.type=exact}.
 *
 * <p>Keys, relative to {@code rollcall.policy.exact.}: {@code version} (one version) or
 * {@code versions} (a comma-separated list), at most one of the two; and
 * {@code accept-no-version} ({@code true} or {@code false}, default false): the empty version
 * (a worker that never set one, as a datafusion-distributed worker that never called
 * {@code with_version()}) is accepted too. Values are stripped and a blank one is unset, so the
 * empty version is said with that key, never with an empty value.
 *
 * <p>Stateless and thread-safe. {@link #create} reads the keys and throws a
 * {@link ConfigurationException} naming the key at fault when both lists or none of the three are
 * set, when {@code version} holds a comma, or when {@code versions} lists nothing.
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
        boolean noVersion = settings.get(PolicyKeys.EXACT_ACCEPT_NO_VERSION);
        String singleKey = settings.fullKey("version");
        String severalKey = settings.fullKey("versions");
        if (single.isPresent() && several.isPresent()) {
            throw new ConfigurationException(severalKey,
                    singleKey + " and " + severalKey + " are both set: set only one of them");
        }
        List<String> versions = versions(settings, single, several, noVersion);
        if (noVersion) {
            List<String> withNone = new ArrayList<>(versions);
            withNone.add("");
            return ExactVersionPolicy.of(withNone);
        }
        return ExactVersionPolicy.of(versions);
    }

    /** The versions {@code version} or {@code versions} lists; none only when the empty version is accepted. */
    private static List<String> versions(Settings settings, Optional<String> single, Optional<String> several,
                                         boolean noVersion) {
        String singleKey = settings.fullKey("version");
        String severalKey = settings.fullKey("versions");
        if (single.isPresent()) {
            // A comma here almost always means a list put under the wrong key; taken literally it
            // would match no worker at all.
            if (single.get().contains(",")) {
                throw ConfigurationException.invalid(singleKey, single.get(),
                        "one version; put a comma-separated list in " + severalKey);
            }
            return List.of(single.get());
        }
        if (several.isPresent()) {
            List<String> versions = settings.list("versions");
            if (versions.isEmpty()) {
                throw ConfigurationException.invalid(severalKey, several.get(),
                        "a comma-separated list of versions such as 1.4.0,1.4.1");
            }
            return versions;
        }
        if (noVersion) {
            return List.of();
        }
        throw ConfigurationException.missing(singleKey, "a version such as 1.4.0, or a comma-separated list in "
                + severalKey + ", or " + settings.fullKey("accept-no-version") + "=true");
    }
}
