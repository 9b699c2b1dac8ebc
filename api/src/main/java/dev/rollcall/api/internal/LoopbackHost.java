package dev.rollcall.api.internal;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Whether a host, as written in a URL, names this machine's loopback without asking DNS:
 * {@code localhost}, a dotted IPv4 literal in 127.0.0.0/8, or the IPv6 literal {@code ::1} (with or
 * without brackets, in any of its spellings). Any other name is not loopback, whatever it would
 * resolve to: a name's answer can change after the check, and a check that resolves can be made to
 * say yes. Pure; thread-safe.
 */
public final class LoopbackHost {

    private static final Pattern IPV4_LOOPBACK = Pattern.compile("127\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    private LoopbackHost() {
    }

    /** {@code true} when {@code host} is a loopback literal or {@code localhost}; {@code false} for null. */
    public static boolean isLiteral(String host) {
        if (host == null) {
            return false;
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.toLowerCase(Locale.ROOT).equals("localhost")) {
            return true;
        }
        var v4 = IPV4_LOOPBACK.matcher(h);
        if (v4.matches()) {
            for (int i = 1; i <= 3; i++) {
                if (Integer.parseInt(v4.group(i)) > 255) {
                    return false;
                }
            }
            return true;
        }
        // A ':' never appears in a DNS name: InetAddress parses such text as an IPv6 literal and
        // never looks it up.
        if (h.indexOf(':') >= 0 && h.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
            try {
                InetAddress a = InetAddress.getByName(h);
                return a instanceof Inet6Address && a.isLoopbackAddress();
            } catch (UnknownHostException e) {
                return false;
            }
        }
        return false;
    }
}
