package dev.rollcall.console;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import io.netty.util.NetUtil;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which {@code Host} a request may name: a literal loopback address ({@code 127.0.0.0/8},
 * {@code [::1]}), {@code localhost}, or a name or address the operator listed in
 * {@value RollcallConsole#ALLOWED_HOSTS_KEY}; the port is ignored, names compare without case. A
 * page elsewhere that rebinds its own name to this host's address sends its own name, which is none
 * of these. Parsing is strict and never asks DNS. Immutable and thread-safe.
 */
final class HostRule {

    /** What a request's {@code Host} gets. */
    enum Verdict {
        /** Answer the request. */
        ALLOWED,
        /** A well-formed name the console does not answer for: {@code 403}. */
        REFUSED,
        /** Missing, repeated or not an authority at all: {@code 400}. */
        MALFORMED
    }

    /** Longer than any name (253) or address with a port: not a Host this console answers. */
    static final int MAX_HOST_CHARS = 300;

    private final Set<String> allowed;

    private HostRule(Set<String> allowed) {
        this.allowed = Set.copyOf(allowed);
    }

    /** Only loopback addresses and {@code localhost}. */
    static HostRule loopbackOnly() {
        return new HostRule(Set.of());
    }

    /**
     * Loopback plus {@code names} (host names or IP addresses, no port, no wildcard).
     *
     * @throws ConfigurationException naming {@value RollcallConsole#ALLOWED_HOSTS_KEY} and the entry
     *         that is not a host name or an address
     */
    static HostRule allowing(Collection<String> names, String asWritten) {
        Set<String> normal = new LinkedHashSet<>();
        for (String name : names) {
            String n = name.strip();
            String form = n.startsWith("[") ? null : normalHost(n);
            if (form == null && n.startsWith("[") && n.endsWith("]")) {
                form = ipv6(n.substring(1, n.length() - 1));
            } else if (form == null) {
                form = ipv6(n); // an IPv6 address may be listed without its brackets
            }
            if (form == null) {
                String key = RollcallConsole.ALLOWED_HOSTS_KEY;
                throw new ConfigurationException(key, key + "=" + ConfigurationException.printable(key, asWritten)
                        + ": the entry '" + PeerText.escape(n, 100) + "' is not a host name or an IP address;"
                        + " expected the names the console is reached by, comma-separated, without port or"
                        + " wildcard (e.g. console.example.internal,10.0.0.5)");
            }
            normal.add(form);
        }
        return new HostRule(normal);
    }

    /** The entries of a comma-separated value; blank entries are skipped. */
    static List<String> split(String value) {
        List<String> out = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            if (!part.isBlank()) {
                out.add(part.strip());
            }
        }
        return out;
    }

    /** The verdict for a request's {@code Host} header value ({@code null}: there was none). */
    Verdict check(String host) {
        String name = hostPart(host);
        if (name == null) {
            return Verdict.MALFORMED;
        }
        String form = name.startsWith("[") ? ipv6(name.substring(1, name.length() - 1)) : normalHost(name);
        if (form == null) {
            return name.endsWith(".") && normalHost(name.substring(0, name.length() - 1)) != null
                    ? Verdict.REFUSED // a fully qualified name: well-formed, and never loopback here
                    : Verdict.MALFORMED;
        }
        return loopback(form) || allowed.contains(form) ? Verdict.ALLOWED : Verdict.REFUSED;
    }

    /**
     * As {@link #check}, and any IP literal besides: for paths that probes and scrapers reach by
     * address (kubelet and Prometheus send the pod's). DNS rebinding needs a name, so a forged name
     * is still refused.
     */
    Verdict checkAllowingAddresses(String host) {
        Verdict verdict = check(host);
        if (verdict != Verdict.REFUSED) {
            return verdict;
        }
        String name = hostPart(host);
        return name.startsWith("[") || NetUtil.isValidIpV4Address(name) ? Verdict.ALLOWED : Verdict.REFUSED;
    }

    /** What the operator listed, normalised (for messages and {@code toString}). */
    Set<String> allowed() {
        return allowed;
    }

    /**
     * The host of an authority {@code host[:port]} or {@code [v6][:port]}, with the port (1 to 5
     * digits, at most 65535) removed and brackets kept; {@code null} when it is not one.
     */
    static String hostPart(String authority) {
        if (authority == null || authority.isEmpty() || authority.length() > MAX_HOST_CHARS) {
            return null;
        }
        int end;
        if (authority.charAt(0) == '[') {
            end = authority.indexOf(']');
            if (end < 0) {
                return null;
            }
            end++;
        } else {
            end = authority.indexOf(':');
            if (end < 0) {
                end = authority.length();
            }
        }
        if (end < authority.length()) {
            if (authority.charAt(end) != ':' || !port(authority.substring(end + 1))) {
                return null;
            }
        }
        String host = authority.substring(0, end);
        return host.isEmpty() ? null : host;
    }

    private static boolean port(String digits) {
        if (digits.isEmpty() || digits.length() > 5) {
            return false;
        }
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return Integer.parseInt(digits) <= 65535;
    }

    /**
     * A dotted-quad IPv4 address in its canonical form, or a host name of letters, digits and
     * hyphens in lower case; {@code null} for anything else (IPv6 needs brackets here).
     */
    static String normalHost(String host) {
        if (host.isEmpty() || host.length() > 253) {
            return null;
        }
        if (NetUtil.isValidIpV4Address(host)) {
            byte[] a = NetUtil.createByteArrayFromIpAddressString(host);
            String canonical = a == null ? null : NetUtil.bytesToIpAddress(a);
            // Only the canonical spelling: 127.000.0.1 is a name to a browser's eyes, not this address.
            return host.equals(canonical) ? canonical : null;
        }
        String lower = host.toLowerCase(Locale.ROOT);
        int start = 0;
        while (start <= lower.length()) {
            int dot = lower.indexOf('.', start);
            int stop = dot < 0 ? lower.length() : dot;
            if (!label(lower, start, stop)) {
                return null;
            }
            if (dot < 0) {
                break;
            }
            start = dot + 1;
        }
        return lower;
    }

    private static boolean label(String s, int from, int to) {
        int n = to - from;
        if (n < 1 || n > 63 || s.charAt(from) == '-' || s.charAt(to - 1) == '-') {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-') {
                return false;
            }
        }
        return true;
    }

    /** An IPv6 literal (no zone) as {@code [canonical]}, or {@code null}. */
    static String ipv6(String literal) {
        InetAddress a = ipv6Address(literal);
        if (a == null) {
            return null;
        }
        // The JDK reads ::ffff:a.b.c.d as the IPv4 address; it stays the literal it was.
        return "[" + (a instanceof Inet4Address ? "::ffff:" : "") + a.getHostAddress() + "]";
    }

    private static InetAddress ipv6Address(String literal) {
        if (literal.isEmpty() || literal.length() > 45 || literal.indexOf(':') < 0) {
            return null; // with a colon, in brackets, the JDK parses a literal or fails: it never asks DNS
        }
        for (int i = 0; i < literal.length(); i++) {
            char c = literal.charAt(i);
            if (Character.digit(c, 16) < 0 && c != ':' && c != '.') {
                return null; // no zone id (%), no other text
            }
        }
        try {
            return InetAddress.getByName("[" + literal + "]");
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static boolean loopback(String form) {
        if (form.equals("localhost")) {
            return true;
        }
        if (form.startsWith("[")) {
            // ::1, or an IPv4-mapped 127.x.x.x; not the IPv4-compatible ::127.0.0.1, which is no loopback
            InetAddress a = ipv6Address(form.substring(1, form.length() - 1));
            return a != null && a.isLoopbackAddress();
        }
        return NetUtil.isValidIpV4Address(form) && form.startsWith("127.");
    }

    @Override
    public String toString() {
        return allowed.isEmpty() ? "loopback only" : "loopback and " + String.join(", ", allowed);
    }
}
