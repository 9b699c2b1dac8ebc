package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.SortedSet;

/**
 * The views a snapshot answers from its {@link ServiceIndex} (services, who offers them, invocation
 * targets, the newest endpoints per service): one place for both snapshot kinds, the published one
 * and the narrowed view. Package-private.
 */
interface ServiceViews extends WorkerEndpoints, WorkerServices, InvocationTargets {

    /** The index of this snapshot's compatible workers' services, built on first use. */
    ServiceIndex serviceIndex();

    @Override
    default List<WorkerEndpoint> latestEndpoints(String service) {
        return serviceIndex().latestEndpoints(service);
    }

    @Override
    default SortedSet<String> services() {
        return serviceIndex().services();
    }

    @Override
    default List<WorkerInfo> workersOffering(String service) {
        return serviceIndex().workersOffering(service);
    }

    @Override
    default List<InvocationTarget> targets() {
        return serviceIndex().targets();
    }

    @Override
    default InvocationTarget target(String service, String handler, Caller caller) {
        return serviceIndex().target(service, handler, caller);
    }
}
