package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.Nearest;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import java.net.URL;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Finds the probe protocol {@code rollcall.probe.protocol} names among the providers
 * {@link ServiceLoader} sees and creates it from {@code rollcall.probe.<name>.*}. An unknown name, or
 * one that two jars provide, is a start-up error naming the value and the key and listing every
 * protocol found. The lookup runs here, in core (an automatic module may use any service), not in
 * the API's {@code ProviderLookup}: the API module cannot declare {@code uses} for this module's SPI.
 * Build time, the builder's thread.
 */
public final class ProbeProtocols {

    /** The key that chooses the protocol. */
    public static final String KEY = "rollcall.probe.protocol";
    /** Today's protocol, {@code rollcall.v1}'s {@code WorkerInfo} and {@code WatchWorkerInfo}. */
    public static final String DEFAULT = RollcallProtocolProvider.NAME;

    /** The protocol a resolver or a one-off probe uses, and the name it was chosen by. */
    public record Chosen(String name, ProbeProtocol protocol) {
        public Chosen {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(protocol, "protocol");
        }

        /** Whether its probes connect to the worker ({@code none}'s do not, and nothing else may dial it then). */
        public boolean connects() {
            return protocol.capabilities().connects();
        }

        /** Whether it is Rollcall's own {@code rollcall} protocol, which the resolver speaks natively. */
        public boolean isRollcall() {
            return protocol instanceof RollcallProtocolProvider.RollcallProtocol;
        }
    }

    /** The default, {@code rollcall}, without any lookup. */
    public static Chosen rollcall() {
        return new Chosen(DEFAULT, RollcallProtocolProvider.PROTOCOL);
    }

    private ProbeProtocols() {
    }

    /**
     * The protocol named {@code given} (set in code), else by {@code rollcall.probe.protocol} in
     * {@code root}, else {@code rollcall}.
     *
     * @throws ConfigurationException naming the key and value when no jar or two jars provide it, or
     *                                when its provider refuses its settings
     */
    public static Chosen choose(Settings root, String given, ClassLoader loader) {
        String name = given != null ? given : root.get(CoreKeys.PROBE_PROTOCOL);
        Map<String, List<ProbeProtocolProvider>> found = all(loader);
        List<ProbeProtocolProvider> matches = found.getOrDefault(name, List.of());
        if (matches.size() > 1) {
            StringBuilder sb = new StringBuilder(KEY + "='" + name + "': " + matches.size()
                    + " jars provide probe protocol '" + name + "'; keep one on the classpath:");
            matches.forEach(p -> sb.append("\n  ").append(p.getClass().getName()).append(" from ")
                    .append(location(p.getClass())));
            throw new ConfigurationException(KEY, sb.toString());
        }
        if (matches.isEmpty()) {
            StringBuilder sb = new StringBuilder(KEY + "=" + ConfigurationException.printable(KEY, name)
                    + ": no jar on the classpath provides that probe protocol");
            String nearest = Nearest.of(name, found.keySet());
            if (nearest != null) {
                sb.append(" (did you mean '").append(nearest).append("'?)");
            }
            sb.append("; known: ").append(String.join(", ", found.keySet()));
            throw new ConfigurationException(KEY, sb.toString());
        }
        ProbeProtocolProvider provider = matches.get(0);
        ProbeProtocol protocol = Objects.requireNonNull(provider.create(root.scope("rollcall.probe." + name + ".")),
                () -> provider.getClass().getName() + " created a null probe protocol");
        Objects.requireNonNull(protocol.capabilities(), () -> provider.getClass().getName() + " has no capabilities");
        return new Chosen(name, protocol);
    }

    /**
     * Marks the keys of the protocols found but not {@code chosen} ({@code rollcall.probe.<name>.*})
     * as known, with one warning each: one file may keep settings for several protocols, as for
     * backends and policies. Call before the unknown-key check.
     */
    public static void ignoreInactive(RollcallConfig config, String chosen, ClassLoader loader,
                                      Consumer<String> warnings) {
        Set<String> names = all(loader).keySet();
        for (String key : config.values().keySet()) {
            for (String name : names) {
                if (!name.equals(chosen) && key.startsWith("rollcall.probe." + name + ".") && !config.wasRead(key)) {
                    config.settings().raw(key); // read: a known key, of a protocol that is not selected
                    warnings.accept(key + " ignored: it configures probe protocol '" + name + "', which is not selected");
                }
            }
        }
    }

    /** Every provider found, by name, sorted. */
    public static Map<String, List<ProbeProtocolProvider>> all(ClassLoader loader) {
        Map<String, List<ProbeProtocolProvider>> byName = new TreeMap<>();
        try {
            for (ProbeProtocolProvider p : ServiceLoader.load(ProbeProtocolProvider.class, loader)) {
                byName.computeIfAbsent(p.name(), n -> new ArrayList<>()).add(p);
            }
        } catch (ServiceConfigurationError e) {
            throw new ConfigurationException(KEY, "a jar on the classpath lists a ProbeProtocolProvider that cannot"
                    + " be loaded: " + e.getMessage(), e);
        }
        return byName;
    }

    private static String location(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        URL url = source == null ? null : source.getLocation();
        return url == null ? "an unknown location" : url.getPath().isEmpty() ? url.toString() : url.getPath();
    }
}
