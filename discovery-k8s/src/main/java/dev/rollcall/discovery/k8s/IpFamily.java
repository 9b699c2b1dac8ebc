package dev.rollcall.discovery.k8s;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Which address of a dual-stack pod becomes its candidate ({@code rollcall.discovery.k8s.ip-family}).
 * A dual-stack Service has one IPv4 and one IPv6 EndpointSlice listing the same pods; each pod is
 * one worker, so it yields one candidate, of the family chosen here. {@code FQDN} slices are of no
 * family and are used in every mode, after the IP families.
 */
enum IpFamily {
    /** Only IPv4 addresses; a pod without one is left out. */
    IPV4("IPv4"),
    /** Only IPv6 addresses; a pod without one is left out. */
    IPV6("IPv6"),
    /** A pod's IPv4 address, its IPv6 address when it has none (the default). */
    PREFER_IPV4("PreferIPv4"),
    /** A pod's IPv6 address, its IPv4 address when it has none. */
    PREFER_IPV6("PreferIPv6");

    static final IpFamily DEFAULT = parse(KubernetesKeys.IP_FAMILY.defaultValue()).orElseThrow();

    private final String text;

    IpFamily(String text) {
        this.text = text;
    }

    /** As written in configuration, case-insensitively. */
    static Optional<IpFamily> parse(String value) {
        return Arrays.stream(values()).filter(f -> f.text.equalsIgnoreCase(value.strip())).findFirst();
    }

    /** {@code IPv4, IPv6, PreferIPv4 or PreferIPv6}, for error messages. */
    static String choices() {
        String all = Arrays.stream(values()).map(IpFamily::toString).collect(Collectors.joining(", "));
        int last = all.lastIndexOf(", ");
        return all.substring(0, last) + " or " + all.substring(last + 2);
    }

    /**
     * How much this mode wants addresses of a slice's {@code addressType}: 0 best, higher worse,
     * -1 never.
     */
    int rank(String addressType) {
        return switch (addressType) {
            case "IPv4" -> this == IPV6 ? -1 : (this == PREFER_IPV6 ? 1 : 0);
            case "IPv6" -> this == IPV4 ? -1 : (this == PREFER_IPV4 ? 1 : 0);
            default -> 2;       // FQDN
        };
    }

    @Override
    public String toString() {
        return text;
    }
}
