package dev.rollcall.policy;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.util.List;

/**
 * Every {@code rollcall.policy.<type>.*} key of the five policies, each declared once; the
 * providers read through them, and the unknown-key check, the Spring Boot metadata and the docs'
 * tables take names and defaults from here. A key is read only when its policy is selected. Found
 * by {@link java.util.ServiceLoader}. Stateless.
 */
public final class PolicyKeys implements KeyCatalog {

    private static final String MODULE = "rollcall-version-policy";
    /** How docs show a key of a policy that has no default (required or optional, as its doc says). */
    private static final String NONE = "—";

    public static final SettingKey<String> EXACT_VERSION = SettingKey.define(MODULE, "rollcall.policy.exact.version",
            SettingType.TEXT, "with policy exact: the one version accepted").derivedDefault(NONE);
    public static final SettingKey<List<String>> EXACT_VERSIONS = SettingKey.define(MODULE,
            "rollcall.policy.exact.versions", SettingType.LIST, "with policy exact: the versions accepted")
            .derivedDefault(NONE);
    public static final SettingKey<Boolean> EXACT_ACCEPT_NO_VERSION = SettingKey.define(MODULE,
            "rollcall.policy.exact.accept-no-version", SettingType.BOOLEAN,
            "with policy exact: accept the empty version too").byDefault(false);
    public static final SettingKey<String> SEMVER_RANGE = SettingKey.define(MODULE, "rollcall.policy.semver.range",
            SettingType.TEXT, "with policy semver: an npm range (^1.4, ~1.4.2, >=1.2 <2, 1.x)").derivedDefault(NONE);
    public static final SettingKey<Boolean> SEMVER_INCLUDE_PRERELEASE = SettingKey.define(MODULE,
            "rollcall.policy.semver.include-prerelease", SettingType.BOOLEAN,
            "with policy semver: let pre-releases match like any version").byDefault(false);
    public static final SettingKey<String> ROLLOUT_RANGE = SettingKey.define(MODULE, "rollcall.policy.rollout.range",
            SettingType.TEXT, "with policy rollout: the npm range every cohort must satisfy").derivedDefault(NONE);
    public static final SettingKey<Integer> ROLLOUT_MIN_WORKERS = SettingKey.define(MODULE,
            "rollcall.policy.rollout.min-workers", SettingType.WHOLE_NUMBER,
            "with policy rollout: workers the newer cohort needs before it is used").derivedDefault(NONE).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<String> ROLLOUT_MIN_FRACTION = SettingKey.define(MODULE,
            "rollcall.policy.rollout.min-fraction", SettingType.TEXT,
            "with policy rollout: share of the fleet the newer cohort needs before it is used").derivedDefault(NONE);
    public static final SettingKey<Boolean> ROLLOUT_INCLUDE_PRERELEASE = SettingKey.define(MODULE,
            "rollcall.policy.rollout.include-prerelease", SettingType.BOOLEAN,
            "with policy rollout: let pre-releases match like any version").byDefault(false);
    public static final SettingKey<List<String>> PREFER_RANGES = SettingKey.define(MODULE,
            "rollcall.policy.prefer.ranges", SettingType.LIST,
            "with policy prefer: npm ranges, most preferred first").derivedDefault(NONE);
    public static final SettingKey<Integer> PREFER_MIN_WORKERS = SettingKey.define(MODULE,
            "rollcall.policy.prefer.min-workers", SettingType.WHOLE_NUMBER,
            "with policy prefer: compatible workers a range needs to be used").byDefault(1).atLeast(1)
            .atMost(Integer.MAX_VALUE);
    public static final SettingKey<Boolean> PREFER_INCLUDE_PRERELEASE = SettingKey.define(MODULE,
            "rollcall.policy.prefer.include-prerelease", SettingType.BOOLEAN,
            "with policy prefer: let pre-releases match like any version").byDefault(false);
    public static final SettingKey<String> CAPABILITIES_BASELINE = SettingKey.define(MODULE,
            "rollcall.policy.capabilities.baseline", SettingType.TEXT,
            "with policy capabilities: requirements every worker must meet (plan-protocol>=3)").derivedDefault(NONE);
    public static final SettingKey<String> CAPABILITIES_RANGE = SettingKey.define(MODULE,
            "rollcall.policy.capabilities.range", SettingType.TEXT,
            "with policy capabilities: an npm range the version must be in too; unset, any").derivedDefault(NONE);

    private static final List<SettingKey<?>> KEYS = List.of(EXACT_VERSION, EXACT_VERSIONS, EXACT_ACCEPT_NO_VERSION,
            SEMVER_RANGE, SEMVER_INCLUDE_PRERELEASE, ROLLOUT_RANGE, ROLLOUT_MIN_WORKERS, ROLLOUT_MIN_FRACTION,
            ROLLOUT_INCLUDE_PRERELEASE, PREFER_RANGES, PREFER_MIN_WORKERS, PREFER_INCLUDE_PRERELEASE,
            CAPABILITIES_BASELINE, CAPABILITIES_RANGE);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
