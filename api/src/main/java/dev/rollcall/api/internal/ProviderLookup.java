package dev.rollcall.api.internal;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.net.URL;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Finds the provider of a configured {@code type} among those {@link ServiceLoader} sees. An
 * unknown type, or one that two modules provide, is a start-up error listing every type found and
 * the jar it came from.
 */
public final class ProviderLookup {


    private ProviderLookup() {
    }

    /**
     * What the provider of the type configured under {@code rollcall.<area>.type} creates from the
     * settings under {@code rollcall.<area>.<type>.}.
     *
     * @throws ConfigurationException when the key is missing (listing the types found), no module or
     *                                two modules provide the type, or the provider fails on its settings
     */
    public static <P, T> T create(Class<P> spi, Function<P, String> typeOf, BiFunction<P, Settings, T> create,
                                  Settings root, String area, String what, ClassLoader loader,
                                  Consumer<String> warnings) {
        String key = "rollcall." + area + ".type";
        String type = root.raw(key).orElseThrow(() -> ConfigurationException.missing(key,
                "a " + what + " type; found: " + all(spi, typeOf, loader).keySet()));
        P provider = find(spi, typeOf, key, type, what, loader, warnings);
        return java.util.Objects.requireNonNull(create.apply(provider, root.scope("rollcall." + area + "." + type + ".")),
                () -> provider.getClass().getName() + " created a null " + what);
    }

    public record Found<P>(String type, P provider, String location) {
    }

    /**
     * The provider of type {@code wanted}; {@code warnings} gets one line per other type that more
     * than one module provides (harmless while it is not selected; the caller logs it).
     */
    public static <P> P find(Class<P> spi, Function<P, String> typeOf, String key, String wanted, String what,
                      ClassLoader loader, Consumer<String> warnings) {
        Map<String, List<Found<P>>> byType = all(spi, typeOf, loader);
        List<Found<P>> matches = byType.getOrDefault(wanted, List.of());
        if (matches.size() > 1) {
            StringBuilder sb = new StringBuilder(key + "='" + wanted + "': " + matches.size()
                    + " modules provide " + what + " type '" + wanted + "'; keep one on the classpath:");
            matches.forEach(f -> sb.append("\n  ").append(f.provider().getClass().getName())
                    .append(" from ").append(f.location()));
            throw new ConfigurationException(key, sb.toString());
        }
        if (matches.isEmpty()) {
            StringBuilder sb = new StringBuilder(key + "='" + wanted + "': no module on the classpath provides "
                    + what + " type '" + wanted + "'");
            String nearest = Nearest.of(wanted, byType.keySet());
            if (nearest != null) {
                sb.append(" (did you mean '").append(nearest).append("'?)");
            }
            if (byType.isEmpty()) {
                sb.append("; found none: add a module that provides one (see the README)");
            } else {
                sb.append("; found:");
                byType.forEach((type, list) -> list.forEach(f -> sb.append("\n  ").append(type).append(" (")
                        .append(f.provider().getClass().getName()).append(" from ").append(f.location()).append(')')));
            }
            throw new ConfigurationException(key, sb.toString());
        }
        byType.forEach((type, list) -> {
            if (list.size() > 1 && !type.equals(wanted)) {
                warnings.accept(what + " type '" + type + "' is provided " + list.size() + " times ("
                        + list.stream().map(Found::location).toList() + "); harmless while it is not selected");
            }
        });
        return matches.get(0).provider();
    }

    /** Every provider found, by type name, sorted. */
    public static <P> Map<String, List<Found<P>>> all(Class<P> spi, Function<P, String> typeOf, ClassLoader loader) {
        Map<String, List<Found<P>>> byType = new TreeMap<>();
        try {
            for (ServiceLoader.Provider<P> p : ServiceLoader.load(spi, loader).stream().toList()) {
                P provider = p.get();
                String type = typeOf.apply(provider);
                byType.computeIfAbsent(type, t -> new ArrayList<>())
                        .add(new Found<>(type, provider, location(p.type())));
            }
        } catch (ServiceConfigurationError e) {
            throw new ConfigurationException(spi.getName(),
                    "a module on the classpath lists a " + spi.getSimpleName() + " that cannot be loaded: "
                            + e.getMessage(), e);
        }
        return byType;
    }

    private static String location(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        URL url = source == null ? null : source.getLocation();
        if (url == null) {
            return "an unknown location";
        }
        String s = url.getPath();
        return s.isEmpty() ? url.toString() : s;
    }
}
