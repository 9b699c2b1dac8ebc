package dev.rollcall.api.registry;

import java.util.Optional;
import java.util.SortedMap;

/**
 * Read-only view: the versions the fleet reported.
 *
 * <p>Every method answers from one immutable snapshot; implementations are thread-safe and never
 * block.
 */
public interface WorkerVersions {

    /**
     * The version a candidate reported, by URL or instance id; empty when it has not answered a
     * probe (yet). A worker that never set a version reports {@code ""}.
     */
    Optional<String> version(String endpointId);

    /** How many workers that answered report each version (compatible or not), by version. */
    SortedMap<String, Integer> versionHistogram();
}
