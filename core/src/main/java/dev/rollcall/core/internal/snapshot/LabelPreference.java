package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.core.internal.settings.LabelSettings;
import java.time.Duration;

/**
 * The soft preference for some labels ({@code rollcall.prefer-labels}): new snapshots list only the
 * preferred workers while at least {@code minWorkers} of them are compatible, otherwise every
 * compatible one.
 *
 * <p><b>Hysteresis.</b> Falling back is immediate: with too few preferred workers every compatible
 * one is needed now. Returning waits until the preferred workers have been enough for {@code hold}
 * (30 s by default): a preferred worker that restarts, or flaps, at the threshold then costs one
 * switch away and one back per {@code hold}, not two per flap. The first time the preferred
 * workers are enough (at start-up) the preference applies at once.
 *
 * <p>Confined to the resolver's serial context; time comes from its ticker.
 */
final class LabelPreference {

    private static final long NEVER = Long.MIN_VALUE;

    private final LabelSelector prefer;
    private final int minWorkers;
    private final long holdNanos;
    private boolean preferring;
    private long fellBackAt = NEVER;
    private long enoughSince = NEVER;

    LabelPreference(LabelSettings settings) {
        this.prefer = settings.prefer();
        this.minWorkers = settings.minWorkers();
        this.holdNanos = settings.hold().toNanos();
    }

    LabelSelector selector() {
        return prefer;
    }

    /** What applies now, given how many preferred workers are compatible. */
    record Decision(boolean preferring, String explanation, long recheckInNanos) {
    }

    Decision decide(int preferredCompatible, int compatible, long now) {
        boolean enough = preferredCompatible >= minWorkers;
        String counts = preferredCompatible + " of " + compatible + " compatible workers match " + prefer
                + " (at least " + minWorkers + " wanted)";
        if (!enough) {
            if (preferring) {
                fellBackAt = now;
            }
            preferring = false;
            enoughSince = NEVER;
            return new Decision(false, "not preferring " + prefer + ": " + counts, 0);
        }
        if (!preferring) {
            if (enoughSince == NEVER) {
                enoughSince = now;
            }
            long due = fellBackAt == NEVER ? now : Math.max(enoughSince, fellBackAt) + holdNanos;
            if (now < due) {
                return new Decision(false, "not preferring " + prefer + " yet: " + counts
                        + "; it applies again once that has held for " + Duration.ofNanos(holdNanos), due - now);
            }
            preferring = true;
        }
        return new Decision(true, "preferring " + prefer + ": " + counts, 0);
    }
}
