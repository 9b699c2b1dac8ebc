package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.internal.ProviderLookup;
import dev.rollcall.api.internal.UnknownKeys;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import dev.rollcall.core.internal.protocols.ProbeProtocols;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The discovery backend, the version policy and the probe protocol a resolver uses: those given in
 * code, else the providers {@code rollcall.discovery.type}, {@code rollcall.policy.type} and
 * {@code rollcall.probe.protocol} name; then the configuration's unknown {@code rollcall.*} keys are
 * reported. Build time.
 */
public record Plugins(WorkerDiscovery discovery, VersionPolicy policy, ProbeProtocols.Chosen protocol) {

    /** Logs as the facade does: users set the level of {@code dev.rollcall.core.WorkerResolver}. */
    private static final Logger log = LoggerFactory.getLogger("dev.rollcall.core.WorkerResolver");

    /**
     * The backend, policy and protocol: {@code discovery}, {@code policy} and {@code protocol} (a
     * name) when given (non-null), else found with {@code loader}. A backend created here is closed again when the configuration is refused.
     *
     * @throws ConfigurationException naming the key and value at fault, or the type that no module
     *                                provides (with the ones found)
     */
    public static Plugins choose(RollcallConfig config, WorkerDiscovery discovery, VersionPolicy policy,
                                 String protocol, ClassLoader loader) {
        Settings root = config.settings();
        ProbeProtocols.Chosen chosenProtocol = ProbeProtocols.choose(root, protocol, loader);
        ProbeProtocols.ignoreInactive(config, chosenProtocol.name(), loader, log::warn);
        VersionPolicy chosenPolicy = policy != null ? policy : ProviderLookup.create(VersionPolicyProvider.class,
                VersionPolicyProvider::type, VersionPolicyProvider::create, root, "policy", "version policy", loader,
                log::warn);
        WorkerDiscovery chosenDiscovery = discovery != null ? discovery : ProviderLookup.create(
                WorkerDiscoveryProvider.class, WorkerDiscoveryProvider::type, WorkerDiscoveryProvider::create, root,
                "discovery", "discovery", loader, log::warn);
        String policyType = policy != null ? null : root.raw("rollcall.policy.type").orElseThrow();
        String discoveryType = discovery != null ? null : root.raw("rollcall.discovery.type").orElseThrow();
        try {
            UnknownKeys.checkResolver(config, discoveryType, policyType, log::warn);
        } catch (ConfigurationException e) {
            if (discovery == null) {
                chosenDiscovery.close();
            }
            throw e;
        }
        return new Plugins(chosenDiscovery, chosenPolicy, chosenProtocol);
    }

    /**
     * As {@link #choose}, for a resolver with {@code settings}: also refuses exact drain with a probe
     * protocol other than {@code rollcall}, naming both keys (closing a backend created here).
     *
     * @throws ConfigurationException as {@link #choose} does, or for that pair
     */
    public static Plugins chooseFor(ResolverSettings settings, RollcallConfig config, WorkerDiscovery discovery,
                                    VersionPolicy policy, String protocol, ClassLoader loader) {
        Plugins chosen = choose(config, discovery, policy, protocol, loader);
        if (settings.exactDrain() && !chosen.protocol().isRollcall()) {
            // Holder streams and ReleaseWorker are rollcall.v1's; no other protocol can carry them.
            if (discovery == null) {
                chosen.discovery().close(); // created here from the configuration: not the caller's
            }
            throw ConfigurationException.invalid(ResolverSettings.EXACT_DRAIN_KEY, "true", "false while "
                    + ProbeProtocols.KEY + " is '" + chosen.protocol().name() + "' (exact drain holds and"
                    + " releases workers over rollcall.v1's WatchWorkerInfo and ReleaseWorker; set "
                    + ProbeProtocols.KEY + "=rollcall or " + ResolverSettings.EXACT_DRAIN_KEY + "=false)");
        }
        return chosen;
    }
}
