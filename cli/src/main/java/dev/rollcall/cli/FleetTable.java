package dev.rollcall.cli;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Prints a snapshot as a table of candidates and a one-line summary. Stateless. */
final class FleetTable {

    private static final String[] HEADINGS = {"ENDPOINT", "VERSION", "STATUS", "REASON"};

    private FleetTable() {
    }

    /** One row per candidate, ordered by URL as the snapshot keeps them, then the summary line. */
    static void print(PrintWriter out, FleetSnapshot snapshot) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADINGS);
        for (WorkerStatus s : snapshot.statuses()) {
            rows.add(new String[] {
                s.endpoint().url(),
                s.info().map(WorkerInfo::version).orElse("-"),
                s.state().name().toLowerCase(Locale.ROOT),
                s.reason()
            });
        }
        int[] widths = new int[HEADINGS.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder("  ");
            for (int i = 0; i < row.length; i++) {
                line.append(i == row.length - 1 ? row[i] : pad(row[i], widths[i] + 2));
            }
            out.println(line.toString().stripTrailing());
        }
        out.println(summary(snapshot));
    }

    /** E.g. {@code snapshot 5: 5 candidates: 3 compatible, ...; versions {1.4.0=2, ...}; policy semver ^1.4.0}. */
    static String summary(FleetSnapshot snapshot) {
        return "snapshot " + snapshot.number() + ": " + snapshot.counts() + "; versions "
                + snapshot.versionHistogram() + "; policy " + snapshot.policy()
                + snapshot.staleSince().map(t -> "; discovery failing since " + t).orElse("");
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(0, width - s.length()));
    }
}
