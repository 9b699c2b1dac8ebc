package dev.rollcall.api.registry;

import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Objects;

/**
 * A handler of a service, the compatible workers that offer it, and who may call it. Immutable.
 *
 * @param service    the service's name
 * @param handler    the handler's name
 * @param visibility its effective visibility: the handler's own, else its service's (as the
 *                   newest version among the workers declares it)
 * @param workers    the compatible workers that offer it, ordered by URL (for a lookup with a
 *                   {@link Caller}: those that let that caller in)
 */
public record InvocationTarget(String service, String handler, Visibility visibility, List<WorkerInfo> workers) {

    public InvocationTarget {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(visibility, "visibility");
        workers = List.copyOf(workers);
    }

    /** The workers' endpoints, ordered by URL. */
    public List<WorkerEndpoint> endpoints() {
        return workers.stream().map(WorkerInfo::endpoint).toList();
    }

    @Override
    public String toString() {
        return service + "/" + handler + " (" + visibility.name().toLowerCase(java.util.Locale.ROOT) + ", "
                + workers.size() + " workers)";
    }
}
