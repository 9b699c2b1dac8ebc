package dev.rollcall.api;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rollcall's configuration: {@code rollcall.*} keys gathered from several places, later ones
 * winning:
 * <ol>
 *   <li>built-in defaults (at the place each key is read);</li>
 *   <li>{@code rollcall.properties} on the classpath;</li>
 *   <li>the file named by the system property {@code rollcall.config}, or else the environment
 *       variable {@code ROLLCALL_CONFIG};</li>
 *   <li>{@code rollcall.*} system properties;</li>
 *   <li>environment variables: {@code rollcall.probe.timeout} is {@code ROLLCALL_PROBE_TIMEOUT}
 *       ({@code .} and {@code -} become {@code _}, letters upper case).</li>
 * </ol>
 *
 * <p>Immutable and thread-safe. It remembers which keys were read, so that the resolver can report
 * keys nothing read (typos) at start-up.
 */
public final class RollcallConfig {

    /** The system property naming a properties file. */
    public static final String CONFIG_PROPERTY = "rollcall.config";
    /** The environment variable naming a properties file. */
    public static final String CONFIG_ENV = "ROLLCALL_CONFIG";

    private final Map<String, String> values;
    private final Map<String, String> env;
    private final Map<String, String> origins;
    private final Set<String> read = ConcurrentHashMap.newKeySet();

    private RollcallConfig(Map<String, String> values, Map<String, String> origins, Map<String, String> env) {
        this.values = Collections.unmodifiableMap(new TreeMap<>(values));
        this.origins = Map.copyOf(origins);
        this.env = Map.copyOf(env);
    }

    /** The full chain: classpath file, config file, system properties, environment. */
    public static RollcallConfig load() {
        return load(System.getProperties(), System.getenv(), Thread.currentThread().getContextClassLoader());
    }

    /**
     * The full chain with {@code file} in the place of {@code -Drollcall.config} / {@code ROLLCALL_CONFIG}:
     * classpath file, then {@code file}, then system properties, then environment. For tools that
     * take a {@code --config FILE} option and must keep the library's precedence.
     *
     * @throws ConfigurationException when the file does not exist or cannot be read
     */
    public static RollcallConfig load(Path file) {
        Properties system = new Properties();
        system.putAll(System.getProperties());
        system.setProperty(CONFIG_PROPERTY, file.toString());
        return load(system, System.getenv(), Thread.currentThread().getContextClassLoader());
    }

    /** The full chain over the given system properties, environment and class loader (for tests). */
    static RollcallConfig load(Properties system, Map<String, String> env, ClassLoader loader) {
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, String> origins = new LinkedHashMap<>();
        if (loader != null) {
            try {
                Enumeration<URL> urls = loader.getResources("rollcall.properties");
                while (urls.hasMoreElements()) {
                    URL url = urls.nextElement();
                    try (InputStream in = url.openStream()) {
                        merge(values, origins, read(in, url.toString()), url.toString());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read rollcall.properties from the classpath", e);
            }
        }
        String file = system.getProperty(CONFIG_PROPERTY);
        String fileKey = "-D" + CONFIG_PROPERTY;
        if (file == null || file.isBlank()) {
            file = env.get(CONFIG_ENV);
            fileKey = CONFIG_ENV;
        }
        if (file != null && !file.isBlank()) {
            Path path = Path.of(file.strip());
            if (!Files.isRegularFile(path)) {
                throw new ConfigurationException(fileKey,
                        fileKey + "='" + file + "': no such file (" + path.toAbsolutePath() + ")");
            }
            try (InputStream in = Files.newInputStream(path)) {
                merge(values, origins, read(in, path.toString()), path.toString());
            } catch (IOException e) {
                throw new ConfigurationException(fileKey, fileKey + "='" + file + "': cannot read it: " + e, e);
            }
        }
        Map<String, String> sys = new LinkedHashMap<>();
        for (String name : system.stringPropertyNames()) {
            if (name.startsWith("rollcall.") && !name.equals(CONFIG_PROPERTY)) {
                sys.put(name, system.getProperty(name));
            }
        }
        merge(values, origins, sys, "system property");
        return new RollcallConfig(values, origins, env);
    }

    /** Exactly these keys, no files, no system properties, no environment. */
    public static RollcallConfig of(Map<String, String> values) {
        Map<String, String> origins = new LinkedHashMap<>();
        values.keySet().forEach(k -> origins.put(k, "programmatic"));
        return new RollcallConfig(values, origins, Map.of());
    }

    /** Exactly the keys of one properties file. */
    public static RollcallConfig fromFile(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            Map<String, String> origins = new LinkedHashMap<>();
            Map<String, String> values = new LinkedHashMap<>();
            merge(values, origins, read(in, file.toString()), file.toString());
            return new RollcallConfig(values, origins, Map.of());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read Rollcall configuration " + file, e);
        }
    }

    /** This configuration with {@code key} set to {@code value} (above every other source). */
    public RollcallConfig with(String key, String value) {
        return with(key, value, "programmatic");
    }

    /**
     * This configuration with {@code key} set to {@code value} (above every other source), which
     * messages about the key name as coming from {@code origin} (e.g. a Spring property source).
     */
    public RollcallConfig with(String key, String value, String origin) {
        Map<String, String> v = new LinkedHashMap<>(values);
        Map<String, String> o = new LinkedHashMap<>(origins);
        v.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        o.put(key, Objects.requireNonNull(origin, "origin"));
        Map<String, String> e = new LinkedHashMap<>(env);
        e.remove(envName(key));
        return new RollcallConfig(v, o, e);
    }

    /** The root view, whose keys are full ({@code rollcall.probe.timeout}). Records what is read. */
    public Settings settings() {
        return Settings.over(this::lookup);
    }

    /** Every key set in properties (not the environment), sorted, for diagnostics. */
    public Map<String, String> values() {
        return values;
    }

    /** Where a key's value came from: a file, {@code system property}, {@code environment}, {@code programmatic}. */
    public String origin(String key) {
        if (env.containsKey(envName(key))) {
            return "environment " + envName(key);
        }
        return origins.getOrDefault(key, "default");
    }

    /** The environment variable that overrides {@code key}: {@code rollcall.probe.timeout} → {@code ROLLCALL_PROBE_TIMEOUT}. */
    public static String envName(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    String lookup(String key) {
        read.add(key);
        String fromEnv = env.get(envName(key));
        return fromEnv != null ? fromEnv : values.get(key);
    }

    /** Whether anything has looked {@code key} up through {@link #settings()} (read keys are known keys). */
    public boolean wasRead(String key) {
        return read.contains(key);
    }

    /** Every key looked up so far through {@link #settings()}, set or not. */
    public Set<String> readKeys() {
        return Set.copyOf(read);
    }

    /** The environment this configuration was loaded with (only {@code ROLLCALL_*} variables matter). */
    public Map<String, String> environment() {
        return env;
    }

    private static Map<String, String> read(InputStream in, String source) throws IOException {
        Properties p = new Properties();
        try (Reader r = new java.io.InputStreamReader(in, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(source, "cannot parse " + source + ": " + e.getMessage(), e);
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String name : p.stringPropertyNames()) {
            m.put(name, p.getProperty(name));
        }
        return m;
    }

    private static void merge(Map<String, String> values, Map<String, String> origins, Map<String, String> more,
                              String origin) {
        more.forEach((k, v) -> {
            values.put(k, v);
            origins.put(k, origin);
        });
    }

    @Override
    public String toString() {
        return "RollcallConfig" + values.keySet();
    }
}
