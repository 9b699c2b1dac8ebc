package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.settings.DurationText;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * When a coordinator is ready ({@code rollcall.readiness.*}), validated: at least
 * {@code min-workers} compatible workers (default 1; 0 = always ready), and, when
 * {@code version} is set, that many of exactly that version (the cohort a deployment requires).
 * A lone coordinator can plan nothing without one compatible worker, hence the default of 1.
 * And, unless {@code max-stale} is zero, discovery's set not stale for longer than
 * {@code max-stale}: a snapshot stale that long is served, but not as a reason to take work.
 *
 * @param minWorkers how many compatible workers make the coordinator ready
 * @param version    the version they must report, or {@code ""} for any the policy accepts
 * @param maxStale   how long the snapshot may be stale and the coordinator still ready; zero: any
 *                   time; null: not set, the probe protocol's default (see {@link #forProtocol})
 */
record ReadinessRule(int minWorkers, String version, Duration maxStale) {

    static final String MAX_STALE_KEY = CoreKeys.READINESS_MAX_STALE.name();
    /**
     * {@code max-stale} when versions are discovery's claims ({@code none}, {@code grpc-health}):
     * longer than a registry takes to elect a leader or restart, so a blip does not take every
     * coordinator out; short enough that a fleet nobody has vouched for is not planned on for long.
     * When workers answer for themselves, a stale set still holds only verified workers: no bound.
     */
    static final Duration DEFAULT_MAX_STALE_FOR_CLAIMS = Duration.ofMinutes(5);

    /**
     * The rule under {@code root} (full keys); {@code max-stale} stays null when unset, for
     * {@link #forProtocol} to fill in once the protocol is chosen.
     *
     * @throws ConfigurationException naming the key, the value and what was expected
     */
    static ReadinessRule read(Settings root) {
        int min = root.get(CoreKeys.READINESS_MIN_WORKERS);
        String version = root.find(CoreKeys.READINESS_VERSION).orElse("");
        if (!version.isEmpty() && min == 0) {
            throw ConfigurationException.invalid("rollcall.readiness.version", version,
                    "no version while rollcall.readiness.min-workers is 0 (always ready): set min-workers to 1 or more");
        }
        return new ReadinessRule(min, version, root.find(CoreKeys.READINESS_MAX_STALE).orElse(null));
    }

    /** This rule with {@code max-stale}'s default when unset: {@link #DEFAULT_MAX_STALE_FOR_CLAIMS} under claims, else none. */
    ReadinessRule forProtocol(boolean versionsAreClaims) {
        return maxStale != null ? this
                : new ReadinessRule(minWorkers, version, versionsAreClaims ? DEFAULT_MAX_STALE_FOR_CLAIMS : Duration.ZERO);
    }

    /** The verdict on {@code snapshot} at {@code now}; cheap (one pass over its compatible workers). */
    Readiness evaluate(FleetSnapshot snapshot, Instant now) {
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
        Optional<String> tooStale = tooStale(snapshot, now);
        if (counted >= minWorkers && tooStale.isEmpty()) {
            return new Readiness(true, counted, minWorkers, counts);
        }
        String why = tooStale.map(s -> s + "; ").orElse("") + counts + "; snapshot " + snapshot.number() + ": "
                + snapshot.counts() + snapshot.discoveryProblem().map(p -> "; " + p).orElse("");
        return new Readiness(false, counted, minWorkers, why);
    }

    /** Why {@code snapshot} has been stale too long at {@code now} to be ready on, if it has. */
    private Optional<String> tooStale(FleetSnapshot snapshot, Instant now) {
        if (maxStale == null || maxStale.isZero() || snapshot.staleSince().isEmpty()) {
            return Optional.empty();
        }
        Duration stale = Duration.between(snapshot.staleSince().get(), now);
        if (stale.compareTo(maxStale) <= 0) {
            return Optional.empty();
        }
        return Optional.of("discovery stale for " + DurationText.of(stale) + " (since " + snapshot.staleSince().get()
                + "), longer than " + MAX_STALE_KEY + " (" + DurationText.of(maxStale) + ")");
    }
}
