package dev.rollcall.api.internal;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Reports {@code rollcall.*} keys that nothing read once a resolver or a worker is configured: a
 * typo is an error that names the nearest known key. One file may configure both sides, so each
 * side checks only its own keys: the coordinator leaves {@code rollcall.worker.*} and
 * {@code rollcall.discovery.<type>.registration.*} to the worker, the worker checks only those.
 * The server's {@code rollcall.serve.*} (the readiness gate's {@code rollcall.kubernetes.*}, the
 * {@code rollcall:} channels' {@code rollcall.calls.*}) are theirs to read, so one file also configures
 * {@code rollcall serve}; so is {@code rollcall.metrics.*}, read by the host that exports the meters.
 * Keys of a backend or policy that is not selected are reported to the caller's warnings sink, so that one file can keep settings
 * for several.
 */
public final class UnknownKeys {

    private static final String WORKER = "rollcall.worker.";
    private static final String SERVE = "rollcall.serve.";
    private static final String GATE = "rollcall.kubernetes.";
    /** The {@code rollcall:} channels' keys (rollcall-grpc), read when a channel is built, not by the resolver. */
    private static final String CALLS = "rollcall.calls.";
    /** Read by whoever exports the meters (core's OtlpMetrics, after the resolver is built). */
    private static final String METRICS = "rollcall.metrics.";

    private UnknownKeys() {
    }

    /**
     * The coordinator side, before anything is read: a key that no catalog in {@code declared}
     * names, although a catalog declares a key beside it (same prefix up to its last dot), is
     * refused with the nearest declared key, so that a typo is reported before the key it misses
     * is reported missing. Keys of a backend or policy that is not selected, or under a prefix no
     * catalog declares (a module without a catalog), are left to {@link #checkResolver}.
     */
    public static void checkDeclared(RollcallConfig config, Collection<SettingKey<?>> declared,
                                     String discoveryType, String policyType) {
        Set<String> names = new HashSet<>();
        Set<String> parents = new HashSet<>();
        for (SettingKey<?> key : declared) {
            names.add(key.name());
            parents.add(parent(key.name()));
        }
        // The read check never looks under these prefixes (their modules read them outside the resolver):
        // where such a module is present, its catalog is the only check, whatever the key's parent.
        Set<String> owned = new HashSet<>();
        for (String prefix : List.of(SERVE, GATE, CALLS, METRICS)) {
            if (names.stream().anyMatch(n -> n.startsWith(prefix))) {
                owned.add(prefix);
            }
        }
        List<String> unknown = new ArrayList<>();
        for (String key : config.values().keySet()) {
            if (!key.startsWith("rollcall.") || names.contains(key) || isWorkerKey(key)
                    || key.startsWith("rollcall.keys.") || key.startsWith("rollcall.console.")
                    || (!parents.contains(parent(key)) && owned.stream().noneMatch(key::startsWith))
                    || inactiveScope(key, "rollcall.discovery.", discoveryType) != null
                    || inactiveScope(key, "rollcall.policy.", policyType) != null) {
                continue;
            }
            unknown.add(describe(config, key, names));
        }
        fail(unknown);
    }

    private static String parent(String key) {
        return key.substring(0, key.lastIndexOf('.') + 1);
    }

    /** The coordinator side: everything but the worker's keys. Either type may be null (set in code). */
    public static void checkResolver(RollcallConfig config, String discoveryType, String policyType,
                                     Consumer<String> warnings) {
        Set<String> known = config.readKeys();
        List<String> unknown = new ArrayList<>();
        for (String key : config.values().keySet()) {
            // rollcall.keys.<service>.<method> names the user's own services: any is valid.
            // rollcall.console.* belongs to the console (rollcall-console), which checks its own keys;
            // rollcall.serve.* to the server (rollcall-server) and rollcall.kubernetes.* to the readiness
            // gate (rollcall-kubernetes-gate), rollcall.calls.* to the rollcall: channels (rollcall-grpc),
            // whose catalogs checkDeclared holds typos to; so is rollcall.metrics.*, which the host reads
            // once the resolver exists.
            if (!key.startsWith("rollcall.") || config.wasRead(key) || isWorkerKey(key)
                    || key.startsWith("rollcall.keys.") || key.startsWith("rollcall.console.")
                    || key.startsWith(SERVE) || key.startsWith(GATE) || key.startsWith(CALLS)
                    || key.startsWith(METRICS)) {
                continue;
            }
            String inactive = inactiveScope(key, "rollcall.discovery.", discoveryType);
            if (inactive == null) {
                inactive = inactiveScope(key, "rollcall.policy.", policyType);
            }
            if (inactive != null) {
                warnings.accept(key + " ignored: it configures " + inactive + ", which is not selected");
                continue;
            }
            unknown.add(describe(config, key, known));
        }
        for (String name : config.environment().keySet()) {
            if (name.startsWith("ROLLCALL_") && !name.equals(RollcallConfig.CONFIG_ENV)
                    && !name.startsWith("ROLLCALL_WORKER_") && !name.startsWith("ROLLCALL_SERVE_")
                    && !name.startsWith("ROLLCALL_KUBERNETES_") && !name.startsWith("ROLLCALL_CALLS_")
                    && !name.startsWith("ROLLCALL_METRICS_")
                    && known.stream().noneMatch(k -> RollcallConfig.envName(k).equals(name))) {
                warnings.accept("environment variable " + name + " matches no Rollcall key and is ignored");
            }
        }
        fail(unknown);
    }

    /**
     * The worker side: {@code rollcall.worker.*} and, when registering with {@code registrationType},
     * {@code rollcall.discovery.<type>.registration.*}; every other key is the coordinator's.
     */
    public static void checkWorker(RollcallConfig config, String registrationType) {
        Set<String> known = config.readKeys();
        String registration = registrationType == null ? null
                : "rollcall.discovery." + registrationType + ".registration.";
        List<String> unknown = new ArrayList<>();
        for (String key : config.values().keySet()) {
            if (config.wasRead(key)) {
                continue;
            }
            if (key.startsWith(WORKER) || (registration != null && key.startsWith(registration))) {
                unknown.add(describe(config, key, known));
            }
        }
        fail(unknown);
    }

    private static boolean isWorkerKey(String key) {
        if (key.startsWith(WORKER)) {
            return true;
        }
        if (!key.startsWith("rollcall.discovery.")) {
            return false;
        }
        String rest = key.substring("rollcall.discovery.".length());
        int dot = rest.indexOf('.');
        return dot > 0 && rest.startsWith("registration.", dot + 1);
    }

    private static String describe(RollcallConfig config, String key, Set<String> known) {
        String nearest = Nearest.of(key, known);
        return key + " (" + config.origin(key) + ")" + (nearest == null ? "" : ": did you mean " + nearest + "?");
    }

    private static void fail(List<String> unknown) {
        if (!unknown.isEmpty()) {
            throw new ConfigurationException(unknown.get(0).split(" ")[0],
                    "unknown Rollcall configuration key" + (unknown.size() > 1 ? "s" : "") + ": "
                            + String.join("; ", unknown));
        }
    }

    /** "discovery type 'etcd'" when {@code key} belongs to a type other than the selected one. */
    private static String inactiveScope(String key, String prefix, String selected) {
        if (!key.startsWith(prefix)) {
            return null;
        }
        String rest = key.substring(prefix.length());
        int dot = rest.indexOf('.');
        if (dot <= 0) {
            return null;
        }
        String type = rest.substring(0, dot);
        return type.equals(selected) ? null : prefix.substring("rollcall.".length(), prefix.length() - 1)
                + " type '" + type + "'";
    }
}
