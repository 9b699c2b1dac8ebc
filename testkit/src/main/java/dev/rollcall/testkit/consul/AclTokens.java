package dev.rollcall.testkit.consul;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stand-in's ACL tokens: each secret with its rules and an accessor ID (the only ID messages
 * name), and the anonymous token's rules for requests without one. No tokens: ACLs are off.
 * Thread-safe; a token's rules can be replaced while requests run.
 */
final class AclTokens {

    /** The anonymous token's accessor ID in every Consul cluster. */
    private static final String ANONYMOUS_ACCESSOR = "00000000-0000-0000-0000-000000000002";

    private final Map<String, AclRules> rules;         // secret -> rules
    private final Map<String, String> accessorIds;     // secret -> accessor ID
    private final AclRules anonymous;

    AclTokens(Map<String, AclRules> tokens, AclRules anonymous) {
        this.rules = new ConcurrentHashMap<>(tokens);
        Map<String, String> accessors = new HashMap<>();
        tokens.keySet().forEach(t -> accessors.put(t, UUID.randomUUID().toString()));
        this.accessorIds = Map.copyOf(accessors);
        this.anonymous = Objects.requireNonNull(anonymous, "anonymous");
    }

    /**
     * Who asks with {@code secret} (null: no token).
     *
     * @throws RequestRefused 403 {@code ACL not found} for a token that does not exist, as Consul does
     */
    Caller caller(String secret) {
        if (rules.isEmpty()) {
            return new Caller(AclRules.ALL, false, "");
        }
        if (secret == null) {
            return new Caller(anonymous, true, ANONYMOUS_ACCESSOR);
        }
        AclRules r = rules.get(secret);
        if (r == null) {
            throw new RequestRefused(403, "ACL not found");
        }
        return new Caller(r, false, accessorIds.get(secret));
    }

    /** @throws IllegalArgumentException when the token does not exist */
    void change(String secret, AclRules newRules) {
        if (rules.replace(Objects.requireNonNull(secret, "token"), newRules) == null) {
            throw new IllegalArgumentException("no such ACL token configured");
        }
    }

    /** The rules a request is judged by; {@code accessorId} names its token in messages. */
    record Caller(AclRules rules, boolean anonymous, String accessorId) {

        boolean mayRead(String service, String node) {
            return rules.serviceAllows(service, AclRules.Access.READ) && rules.nodeAllows(node, AclRules.Access.READ);
        }

        void requireServiceWrite(String service) {
            if (!rules.serviceAllows(service, AclRules.Access.WRITE)) {
                throw denied("service:write", service);
            }
        }

        void requireNodeWrite(String node) {
            if (!rules.nodeAllows(node, AclRules.Access.WRITE)) {
                throw denied("node:write", node);
            }
        }

        /** Consul's message for a missing permission; it names the token by its accessor ID, never its secret. */
        private RequestRefused denied(String permission, String on) {
            return new RequestRefused(403, "Permission denied: token with AccessorID '" + accessorId
                    + "' lacks permission '" + permission + "' on \"" + on + "\"");
        }
    }
}
