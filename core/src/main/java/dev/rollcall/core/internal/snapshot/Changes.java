package dev.rollcall.core.internal.snapshot;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What a change-by-change build reads: the workers that joined, left or noted a change since the
 * last one. Filled by the tracker ({@link #joined}, {@link #left}, {@link #everything}) and by the
 * workers themselves ({@link ShownState#noteChange()}), emptied by each build.
 *
 * <p>Confined to the resolver's serial context.
 */
public final class Changes {

    /** Workers that noted a change, joined ones too. */
    final List<ShownWorker> changed = new ArrayList<>();
    /** Workers that joined since the last build and are still tracked. */
    final List<ShownWorker> joined = new ArrayList<>();
    /** Workers that left since the last build. */
    final List<ShownWorker> left = new ArrayList<>();
    /** Something that is not one worker's changed (a schema arrived): read every worker. */
    boolean everything = true;

    /** {@code w} is tracked from now on: it notes its changes here, and the next build reads it. */
    public void joined(ShownWorker w) {
        ShownState s = w.shownState();
        s.changes = changed;
        joined.add(w);
        s.noteChange();
    }

    /** {@code w} is tracked no more: the next build takes it out, and it notes nothing more. */
    public void left(ShownWorker w) {
        w.shownState().changes = null;
        left.add(w);
    }

    /** Something that is not one worker's changed: the next build reads every worker. */
    public void everything() {
        everything = true;
    }

    /** Forgets the joined workers that {@code gone} says left again before a build saw them. */
    public void forgetJoinedIf(Predicate<ShownWorker> gone) {
        joined.removeIf(gone);
    }

    void clear() {
        for (ShownWorker w : changed) {
            w.shownState().changed = false;
        }
        changed.clear();
        joined.clear();
        left.clear();
        everything = false;
    }
}
