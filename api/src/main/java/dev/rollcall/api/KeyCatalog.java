package dev.rollcall.api;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The configuration keys one module reads, each declared once as a {@link SettingKey}. Each of
 * Rollcall's modules registers one with {@link ServiceLoader} ({@code META-INF/services} or
 * {@code provides} in a named module); the unknown-key check, the Spring Boot metadata and the
 * docs tables read them all through {@link #all}.
 *
 * <p>Implementations are stateless and thread-safe; {@link #keys()} returns the same list on
 * every call.
 */
public interface KeyCatalog {

    /** The keys this module reads, in the order docs list them. */
    List<SettingKey<?>> keys();

    /** Every key of every catalog {@code loader} sees, catalog by catalog. */
    static List<SettingKey<?>> all(ClassLoader loader) {
        List<SettingKey<?>> keys = new ArrayList<>();
        for (KeyCatalog catalog : ServiceLoader.load(KeyCatalog.class, loader)) {
            keys.addAll(catalog.keys());
        }
        return List.copyOf(keys);
    }
}
