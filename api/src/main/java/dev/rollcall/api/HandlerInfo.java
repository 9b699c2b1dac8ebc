package dev.rollcall.api;

import java.util.Objects;
import java.util.Optional;

/**
 * A handler a worker advertises within a {@link ServiceInfo}. Immutable.
 *
 * @param name       the handler's name
 * @param visibility its own visibility, or empty to inherit the service's
 */
public record HandlerInfo(String name, Optional<Visibility> visibility) {

    public HandlerInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(visibility, "visibility");
    }

    /** A handler that inherits its service's visibility. */
    public static HandlerInfo of(String name) {
        return new HandlerInfo(name, Optional.empty());
    }

    /** A handler with its own visibility, overriding its service's. */
    public static HandlerInfo of(String name, Visibility visibility) {
        return new HandlerInfo(name, Optional.of(visibility));
    }
}
