package dev.rollcall.api.registry;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.SortedSet;

/**
 * Read-only view: what the compatible workers can do ({@link dev.rollcall.api.Capabilities}), and
 * which of them meet a query's {@link Requirements}.
 *
 * <p>Only compatible workers count. Every method answers from one immutable snapshot;
 * implementations are thread-safe and never block. A lookup costs about what its answer costs, not
 * a pass over the fleet (the snapshot indexes capabilities on first use).
 */
public interface WorkerCapabilities {

    /** The names of the capabilities at least one compatible worker has, sorted. */
    SortedSet<String> capabilities();

    /**
     * The compatible workers that meet every one of {@code requirements}, ordered by URL; all of
     * them for {@link Requirements#none()}.
     */
    List<WorkerInfo> workersWith(Requirements requirements);

    /**
     * As {@link #workersWith(Requirements)}, reading each text as {@link Requirements#of(String...)}
     * does, e.g. {@code workersWith("udf:geo_distance", "plan-protocol>=3")}.
     *
     * @throws IllegalArgumentException naming a requirement that is not one
     */
    default List<WorkerInfo> workersWith(String... requirements) {
        return workersWith(Requirements.of(requirements));
    }
}
