package dev.rollcall.api;

import java.util.List;
import java.util.Objects;

/**
 * A service a worker advertises (a function, a task kind), with its handlers. Immutable.
 *
 * @param name       the service's name
 * @param visibility who may call it; handlers may override it
 * @param handlers   its handlers, possibly none
 */
public record ServiceInfo(String name, Visibility visibility, List<HandlerInfo> handlers) {

    public ServiceInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(visibility, "visibility");
        handlers = List.copyOf(handlers);
    }

    /** A public service without handlers. */
    public static ServiceInfo of(String name) {
        return new ServiceInfo(name, Visibility.PUBLIC, List.of());
    }

    /** The visibility that applies to {@code handler}: its own if set, else the service's. */
    public Visibility effectiveVisibility(HandlerInfo handler) {
        return handler.visibility().orElse(visibility);
    }
}
