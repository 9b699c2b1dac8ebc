package dev.rollcall.testkit.consul;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rules of one Consul ACL policy, for the resources the stand-in checks: {@code service},
 * {@code service_prefix}, {@code node}, {@code node_prefix}, written in Consul's HCL rule syntax,
 * e.g. {@code service "workers" { policy = "write" }  node_prefix "" { policy = "read" }}. Other
 * resource types ({@code key_prefix}, {@code agent}, ...) are accepted and grant nothing here.
 *
 * <p>As in Consul: an exact rule beats every prefix rule, the longest prefix rule beats shorter
 * ones, {@code write} implies {@code read}, {@code deny} denies, and with no matching rule the
 * default policy ({@code deny}) applies. Immutable.
 */
final class AclRules {

    enum Access { READ, WRITE }

    private static final Pattern RULE = Pattern.compile(
            "\\s*([a-z_]+)\\s+\"([^\"]*)\"\\s*\\{\\s*policy\\s*=\\s*\"([a-z]+)\"\\s*}\\s*");
    private static final Pattern COMMENT = Pattern.compile("(?m)(#|//).*$");

    /** Grants every permission, like a management token. */
    static final AclRules ALL = new AclRules(List.of(), true);
    /** Grants nothing: what the anonymous token has under {@code default_policy = "deny"}. */
    static final AclRules NONE = new AclRules(List.of(), false);

    private record Rule(String resource, String name, boolean prefix, String policy) {
    }

    private final List<Rule> rules;
    private final boolean management;

    private AclRules(List<Rule> rules, boolean management) {
        this.rules = List.copyOf(rules);
        this.management = management;
    }

    /**
     * @throws IllegalArgumentException naming the part of {@code hcl} that is not a rule, or a
     *                                  policy other than {@code read}, {@code write}, {@code deny}
     */
    static AclRules parse(String hcl) {
        String text = COMMENT.matcher(hcl).replaceAll("");
        Matcher m = RULE.matcher(text);
        List<Rule> rules = new ArrayList<>();
        int at = 0;
        while (at < text.length() && m.find(at) && m.start() == at) {
            String type = m.group(1);
            String policy = m.group(3).toLowerCase(Locale.ROOT);
            if (!policy.equals("read") && !policy.equals("write") && !policy.equals("deny") && !policy.equals("list")) {
                throw new IllegalArgumentException("ACL rule " + m.group().strip() + ": policy '" + policy
                        + "' is not read, write, list or deny");
            }
            boolean prefix = type.endsWith("_prefix");
            rules.add(new Rule(prefix ? type.substring(0, type.length() - "_prefix".length()) : type, m.group(2),
                    prefix, policy));
            at = m.end();
        }
        if (!text.substring(at).isBlank()) {
            throw new IllegalArgumentException("not an ACL rule: '" + text.substring(at).strip() + "'");
        }
        return new AclRules(rules, false);
    }

    boolean serviceAllows(String service, Access access) {
        return allows("service", service, access);
    }

    boolean nodeAllows(String node, Access access) {
        return allows("node", node, access);
    }

    private boolean allows(String resource, String name, Access access) {
        if (management) {
            return true;
        }
        Rule best = null;
        for (Rule r : rules) {
            if (!r.resource.equals(resource)) {
                continue;
            }
            if (!r.prefix && r.name.equals(name)) {
                best = r;
                break;
            }
            if (r.prefix && name.startsWith(r.name) && (best == null || r.name.length() > best.name.length())) {
                best = r;
            }
        }
        if (best == null) {
            return false;
        }
        return switch (best.policy) {
            case "write" -> true;
            case "read", "list" -> access == Access.READ;
            default -> false;
        };
    }
}
