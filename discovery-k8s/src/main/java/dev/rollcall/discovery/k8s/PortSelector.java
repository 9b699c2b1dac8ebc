package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which of an EndpointSlice's ports is the worker's gRPC port: the one with a given name, the one
 * with a given number, or (when neither is configured) the slice's only TCP port.
 *
 * <p>Only TCP ports count ({@code protocol} unset means TCP). A port without a number ("all
 * ports", which the API allows for some consumers) is never chosen. Immutable.
 *
 * @param name   the port's name, or {@code null}
 * @param number the port's number, or 0
 * @param key    the full configuration key, for messages
 */
record PortSelector(String name, int number, String key) {

    /** The slice's port to use, or why the slice has none. */
    sealed interface Choice permits Chosen, Unusable {
    }

    record Chosen(int port) implements Choice {
    }

    record Unusable(String reason) implements Choice {
    }

    static PortSelector byName(String name, String key) {
        return new PortSelector(name, 0, key);
    }

    static PortSelector byNumber(int number, String key) {
        return new PortSelector(null, number, key);
    }

    static PortSelector onlyPort(String key) {
        return new PortSelector(null, 0, key);
    }

    Choice choose(List<EndpointPort> ports) {
        List<EndpointPort> tcp = new ArrayList<>();
        if (ports != null) {
            for (EndpointPort p : ports) {
                if (p != null && p.getPort() != null && isTcp(p)) {
                    tcp.add(p);
                }
            }
        }
        if (name != null) {
            for (EndpointPort p : tcp) {
                if (name.equals(p.getName())) {
                    return new Chosen(p.getPort());
                }
            }
            return new Unusable("it has no TCP port named '" + name + "' (" + describe(tcp) + ")");
        }
        if (number != 0) {
            for (EndpointPort p : tcp) {
                if (p.getPort() == number) {
                    return new Chosen(number);
                }
            }
            return new Unusable("it has no TCP port " + number + " (" + describe(tcp) + ")");
        }
        if (tcp.size() == 1) {
            return new Chosen(tcp.get(0).getPort());
        }
        if (tcp.isEmpty()) {
            return new Unusable("it has no TCP port with a number");
        }
        return new Unusable("it has " + tcp.size() + " TCP ports (" + describe(tcp) + "); set " + key
                + " to the name or number of the workers' gRPC port");
    }

    private static boolean isTcp(EndpointPort p) {
        return p.getProtocol() == null || p.getProtocol().toUpperCase(Locale.ROOT).equals("TCP");
    }

    private static String describe(List<EndpointPort> tcp) {
        if (tcp.isEmpty()) {
            return "no TCP ports";
        }
        List<String> items = new ArrayList<>();
        for (EndpointPort p : tcp) {
            String n = p.getName();
            items.add(n == null || n.isEmpty() ? String.valueOf(p.getPort()) : n + "=" + p.getPort());
        }
        return "TCP ports: " + String.join(", ", items);
    }

    /** For descriptions: {@code port grpc}, {@code port 7001} or {@code single port}. */
    String describe() {
        return name != null ? "port " + name : number != 0 ? "port " + number : "single port";
    }
}
