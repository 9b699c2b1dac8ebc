package dev.rollcall.api.discovery;

import dev.rollcall.api.Settings;

/**
 * Creates a {@link WorkerDiscovery} of one {@link #type()}. Found by {@link java.util.ServiceLoader}:
 * list the implementation in {@code META-INF/services/dev.rollcall.api.discovery.WorkerDiscoveryProvider}
 * (and {@code provides} it in {@code module-info} for JPMS users). Needs a public no-argument
 * constructor.
 */
public interface WorkerDiscoveryProvider {

    /** The name selected by {@code rollcall.discovery.type}, e.g. {@code static}, {@code etcd}. */
    String type();

    /**
     * Creates a backend from its settings, scoped to {@code rollcall.discovery.<type>.}. Reads every
     * key it supports here and validates them all.
     *
     * @throws dev.rollcall.api.ConfigurationException naming the bad key and value
     */
    WorkerDiscovery create(Settings settings);
}
