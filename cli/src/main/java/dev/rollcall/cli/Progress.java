package dev.rollcall.cli;

import java.io.PrintWriter;

/**
 * {@code probed 120/500} on stderr while workers are being probed, so that a long wait does not
 * look like a hang.
 *
 * <p>On a terminal the line is redrawn in place (at most once per whole percent) and ends with a
 * newline when everything is done; elsewhere (only when asked for, with {@code --progress}) it is
 * one line per tenth, so that a log stays short. Nothing is printed when it is off. Counts are
 * whatever the caller passes; the reporter remembers only what it last printed. Not thread-safe:
 * call it from one thread.
 */
final class Progress {

    private final PrintWriter err;
    private final boolean enabled;
    private final boolean redraw;
    private long lastStep = -1;
    private boolean open;

    private Progress(PrintWriter err, boolean enabled, boolean redraw) {
        this.err = err;
        this.enabled = enabled;
        this.redraw = redraw;
    }

    /**
     * Reports when {@code forced} (the {@code --progress} flag) or when stderr is a terminal; redraws
     * in place only on a terminal.
     */
    static Progress to(PrintWriter err, boolean forced, boolean stderrIsTerminal) {
        return new Progress(err, forced || stderrIsTerminal, stderrIsTerminal);
    }

    /** {@code done} of {@code total} have an answer (or a failure). Prints when a new step is reached. */
    void update(long done, long total) {
        if (!enabled || total <= 0) {
            return;
        }
        long steps = redraw ? 100 : 10;
        long step = done >= total ? steps : done * steps / total;
        if (step == lastStep) {
            return;
        }
        lastStep = step;
        String text = "probed " + done + "/" + total;
        if (redraw) {
            err.print("\r" + text);
            open = done < total;
            if (!open) {
                err.println();
            }
        } else {
            err.println(text);
        }
        err.flush();
    }

    /** Ends an unfinished in-place line (on an early stop), so that what follows starts on its own line. */
    void close() {
        if (open) {
            err.println();
            err.flush();
            open = false;
        }
    }
}
