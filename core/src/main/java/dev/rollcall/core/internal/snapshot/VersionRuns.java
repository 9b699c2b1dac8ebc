package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.WorkerInfo;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One build's look at the workers' versions, which come in runs (workers of one version one after
 * another): each run adds its version to {@link #versions} and asks whether its schema is ready
 * once, not once per worker (that cannot change within a build). Without schemas ({@code versions}
 * null) every schema counts as ready.
 */
final class VersionRuns {
    final Set<String> versions;
    private final Predicate<ShownWorker> ready;
    private String added;
    private String asked;
    private boolean answer = true;

    VersionRuns(Set<String> versions, Predicate<ShownWorker> ready) {
        this.versions = versions;
        this.ready = ready;
    }

    /** A worker's answer ({@code null} before its first). */
    void saw(WorkerInfo info) {
        if (versions != null && info != null && info.version() != added) {
            added = info.version();
            versions.add(added);
        }
    }

    /** Whether the schema of {@code t}'s version (it answered) is known, or none is fetched. */
    boolean schemaReady(ShownWorker t) {
        if (versions != null && t.info().version() != asked) {
            asked = t.info().version();
            answer = ready.test(t);
        }
        return answer;
    }
}
