package dev.rollcall.api.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Which field of a request is its routing key, per {@code (service, method)}: the configuration
 * behind {@link KeyExtractors}. Written like the resolver's keys,
 * {@code rollcall.keys.<service>.<method>=<field path>}, e.g.
 * {@code rollcall.keys.demo.v1.Orders.Place=order.customer_id}: the method is what follows the last
 * dot of the key (method names have none), the path names proto fields (as written in the
 * {@code .proto} file) from the request message down, separated by dots.
 *
 * <p>Only the syntax is checked here; whether the path exists is known once a schema arrives.
 * Immutable and thread-safe.
 */
public final class KeyPaths {

    private static final KeyPaths NONE = new KeyPaths(Map.of());

    private record Method(String service, String method) {
    }

    private final Map<Method, List<String>> paths;
    private final Map<String, String> written;

    private KeyPaths(Map<String, String> byMethod) {
        Map<Method, List<String>> p = new HashMap<>();
        byMethod.forEach((serviceMethod, path) -> {
            int dot = serviceMethod.lastIndexOf('.');
            if (dot <= 0 || dot == serviceMethod.length() - 1) {
                throw new IllegalArgumentException("'" + serviceMethod
                        + "' is not <service>.<method> (e.g. demo.v1.Orders.Place)");
            }
            p.put(new Method(serviceMethod.substring(0, dot), serviceMethod.substring(dot + 1)),
                    parsePath(serviceMethod, path));
        });
        this.paths = Map.copyOf(p);
        this.written = java.util.Collections.unmodifiableMap(new TreeMap<>(byMethod));
    }

    /** No key configured for any method. */
    public static KeyPaths none() {
        return NONE;
    }

    /**
     * Key paths by {@code <service>.<method>}, e.g. {@code demo.v1.Orders.Place → order.customer_id}.
     *
     * @throws IllegalArgumentException naming the entry whose method or path is malformed
     */
    public static KeyPaths of(Map<String, String> byMethod) {
        Objects.requireNonNull(byMethod, "byMethod");
        return byMethod.isEmpty() ? NONE : new KeyPaths(byMethod);
    }

    /** The field path of the key of {@code method} of {@code service}, one field name per element. */
    public Optional<List<String>> path(String service, String method) {
        return Optional.ofNullable(paths.get(new Method(service, method)));
    }

    /** The paths as written, by {@code <service>.<method>}, sorted. */
    public Map<String, String> asMap() {
        return written;
    }

    private static List<String> parsePath(String serviceMethod, String path) {
        Objects.requireNonNull(path, "path");
        List<String> fields = new ArrayList<>();
        for (String part : path.strip().split("\\.", -1)) {
            if (!part.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException("key path '" + path + "' of " + serviceMethod
                        + " is not a dot-separated list of field names (e.g. order.customer_id)");
            }
            fields.add(part);
        }
        return List.copyOf(fields);
    }

    /**
     * What is wrong with these paths for the methods that {@code schema} defines, one message per
     * bad path naming its configuration key; empty when all are fine. Methods the schema does not
     * define are not checked (another version may define them).
     */
    public List<String> problems(ProtoSchema schema) {
        Objects.requireNonNull(schema, "schema");
        Map<String, List<String>> byServiceMethod = new HashMap<>();
        paths.forEach((m, path) -> byServiceMethod.put(m.service() + "." + m.method(), path));
        return KeyReader.problems(byServiceMethod, schema);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyPaths k && k.paths.equals(paths);
    }

    @Override
    public int hashCode() {
        return paths.hashCode();
    }

    @Override
    public String toString() {
        return "KeyPaths" + written;
    }
}
