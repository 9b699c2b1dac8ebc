package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;

/**
 * When a coordinator is ready ({@code rollcall.readiness.*}), validated: at least
 * {@code min-workers} compatible workers (default 1; 0 = always ready), and, when
 * {@code version} is set, that many of exactly that version (the cohort a deployment requires).
 * A lone coordinator can plan nothing without one compatible worker, hence the default of 1.
 *
 * @param minWorkers how many compatible workers make the coordinator ready
 * @param version    the version they must report, or {@code ""} for any the policy accepts
 */
record ReadinessRule(int minWorkers, String version) {

    static final int DEFAULT_MIN_WORKERS = 1;
    private static final int MAX_MIN_WORKERS = 1_000_000;

    /**
     * The rule under {@code root} (full keys).
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static ReadinessRule read(Settings root) {
        int min = root.integer("rollcall.readiness.min-workers", DEFAULT_MIN_WORKERS, 0, MAX_MIN_WORKERS);
        String version = root.string("rollcall.readiness.version", "");
        if (!version.isEmpty() && min == 0) {
            throw ConfigurationException.invalid("rollcall.readiness.version", version,
                    "no version while rollcall.readiness.min-workers is 0 (always ready): set min-workers to 1 or more");
        }
        return new ReadinessRule(min, version);
    }

    /** The verdict on {@code snapshot}; cheap (one pass over its compatible workers). */
    Readiness evaluate(FleetSnapshot snapshot) {
        if (minWorkers == 0) {
            return new Readiness(true, snapshot.counts().compatible(), 0,
                    "always ready (rollcall.readiness.min-workers=0)");
        }
        int counted = 0;
        for (WorkerInfo worker : snapshot.workers()) {
            if (version.isEmpty() || version.equals(worker.version())) {
                counted++;
            }
        }
        String what = version.isEmpty() ? " compatible workers" : " compatible workers of version '" + version + "'";
        String counts = counted + what + " (" + minWorkers + " required)";
        if (counted >= minWorkers) {
            return new Readiness(true, counted, minWorkers, counts);
        }
        String why = counts + "; snapshot " + snapshot.number() + ": " + snapshot.counts()
                + snapshot.discoveryProblem().map(p -> "; " + p).orElse("");
        return new Readiness(false, counted, minWorkers, why);
    }
}
