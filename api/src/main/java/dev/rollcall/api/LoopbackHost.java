package dev.rollcall.api;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether a host, as written in configuration or a URL, names this machine's loopback — for the
 * checks that let a secret cross a plaintext connection only to this machine. The answer comes from
 * the text alone: a name is never resolved, since its answer can change after the check
 * ({@code 127.evil.example} is not loopback). Stateless and thread-safe.
 */
public final class LoopbackHost {

    private static final Pattern IPV4_LOOPBACK = Pattern.compile("127\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    private LoopbackHost() {
    }

    /**
     * True for {@code localhost} (any case), a dotted IPv4 literal in 127.0.0.0/8, and the IPv6
     * literal {@code ::1} in any spelling, with or without brackets; false for everything else,
     * {@code null} included.
     */
    public static boolean isLiteral(String host) {
        if (host == null) {
            return false;
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.equalsIgnoreCase("localhost")) {
            return true;
        }
        Matcher v4 = IPV4_LOOPBACK.matcher(h);
        if (v4.matches()) {
            return Integer.parseInt(v4.group(1)) <= 255 && Integer.parseInt(v4.group(2)) <= 255
                    && Integer.parseInt(v4.group(3)) <= 255;
        }
        // Hex digits, colons and dots only: InetAddress parses such text as an IPv6 literal and never looks it up.
        if (h.indexOf(':') < 0 || !h.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
            return false;
        }
        try {
            InetAddress a = InetAddress.getByName(h);
            return a instanceof Inet6Address && a.isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false; // not an IPv6 literal: not loopback
        }
    }
}
