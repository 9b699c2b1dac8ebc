package dev.rollcall.cli;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Prints a snapshot as a table of candidates and a one-line summary: the demo's four-column form
 * ({@link #print}) and the {@code workers} command's form ({@link #printWorkers}). Every text a
 * worker, a backend or a policy wrote (versions, instance ids, reasons, discovery's problem) goes
 * through {@link PeerText} first, so nothing in a cell can start a line or move the cursor of the
 * terminal it is printed on. Stateless.
 */
final class FleetTable {

    private static final String[] HEADINGS = {"ENDPOINT", "VERSION", "STATUS", "REASON"};
    private static final String[] WORKERS_HEADINGS = {"ENDPOINT", "VERSION", "INSTANCE", "STATUS"};
    private static final String[] WORKERS_HEADINGS_WITH_CAPABILITIES =
            {"ENDPOINT", "VERSION", "INSTANCE", "CAPABILITIES", "STATUS"};
    /** Enough of an instance id to see that a worker restarted; JSON carries the whole id. */
    static final int SHORT_INSTANCE = 8;
    /** The longest cell or quoted text, as {@link PeerText} bounds it. */
    static final int MAX_TEXT_CHARS = 512;

    private FleetTable() {
    }

    /** One row per candidate, ordered by URL as the snapshot keeps them, then the summary line. */
    static void print(PrintWriter out, FleetSnapshot snapshot) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADINGS);
        for (WorkerStatus s : snapshot.statuses()) {
            rows.add(new String[] {
                s.endpoint().url(),
                s.info().map(i -> shown(i.version())).orElse("-"),
                stateName(s.state()),
                shown(s.reason())
            });
        }
        printRows(out, rows);
        out.println(summary(snapshot));
    }

    /** E.g. {@code snapshot 5: 5 candidates: 3 compatible, ...; versions {1.4.0=2, ...}; policy semver ^1.4.0}. */
    static String summary(FleetSnapshot snapshot) {
        return "snapshot " + snapshot.number() + ": " + snapshot.counts() + "; versions "
                + shown(String.valueOf(snapshot.versionHistogram())) + "; policy " + shown(snapshot.policy())
                + snapshot.staleSince().map(t -> "; discovery failing since " + t).orElse("");
    }

    /**
     * The {@code workers} table: endpoint, version, short instance id and the status with its
     * reason ({@code rejected: version '2.0.0' is outside ^1.4.0}) and, for a draining worker that
     * coordinators still hold, how many ({@code draining (2 holders)}, {@link WorkerStatus#holders()}),
     * one row per candidate ordered by URL, then {@link #census}. When any candidate reports
     * capabilities, a {@code CAPABILITIES} column lists each one's ({@code -} for none); a fleet
     * without any prints as before. A worker a narrowed snapshot left out shows what it lacks
     * ({@code lacks udf:geo_distance}). A snapshot without candidates prints only the summary.
     */
    static void printWorkers(PrintWriter out, FleetSnapshot snapshot) {
        if (!snapshot.statuses().isEmpty()) {
            boolean capabilities = snapshot.statuses().stream()
                    .anyMatch(s -> s.info().map(i -> !i.capabilities().isEmpty()).orElse(false));
            List<String[]> rows = new ArrayList<>();
            rows.add(capabilities ? WORKERS_HEADINGS_WITH_CAPABILITIES : WORKERS_HEADINGS);
            for (WorkerStatus s : snapshot.statuses()) {
                String endpoint = s.endpoint().url();
                String version = version(s);
                String instance = s.info().map(i -> shortInstance(i.instanceId())).orElse("-");
                String status = status(s, holdersSuffix(s));
                rows.add(capabilities
                        ? new String[] {endpoint, version, instance, capabilities(s), status}
                        : new String[] {endpoint, version, instance, status});
            }
            printRows(out, rows);
        }
        out.println(census(snapshot));
    }

    /**
     * E.g. {@code snapshot 6: 6 candidates: 4 compatible (1.4.0 x4), 1 rejected (2.0.0 x1), 1 unreachable;
     * policy semver ^1.4}; narrowed to requirements, {@code ..., 1 lacking a requirement; requires
     * udf:geo_distance; policy ...}. Pending candidates are counted only when there are some; the label
     * selector and which label preference applied, when configured, follow the policy; a failing
     * discovery backend is named at the end.
     */
    static String census(FleetSnapshot snapshot) {
        var counts = snapshot.counts();
        StringBuilder line = new StringBuilder("snapshot ").append(snapshot.number()).append(": ")
                .append(counts.candidates()).append(counts.candidates() == 1 ? " candidate: " : " candidates: ")
                .append(counts.compatible()).append(" compatible")
                .append(histogram(versionsIn(snapshot, State.COMPATIBLE)))
                .append(", ").append(counts.rejected()).append(" rejected")
                .append(histogram(versionsIn(snapshot, State.REJECTED)))
                .append(", ").append(counts.unreachable()).append(" unreachable");
        if (counts.pending() > 0) {
            line.append(", ").append(counts.pending()).append(" pending");
        }
        if (counts.draining() > 0) {
            line.append(", ").append(counts.draining()).append(" draining");
        }
        if (counts.notServing() > 0) {
            line.append(", ").append(counts.notServing()).append(" not serving");
        }
        if (!snapshot.requirements().isEmpty()) {
            line.append(", ").append(counts.lacksRequirement()).append(" lacking a requirement; requires ")
                    .append(shown(snapshot.requirements().toString()));
        }
        line.append("; policy ").append(shown(snapshot.policy()));
        if (!snapshot.selection().selector().isEmpty()) {
            line.append("; selector ").append(shown(snapshot.selection().selector()));
        }
        if (!snapshot.selection().preference().isEmpty()) {
            line.append("; ").append(shown(snapshot.selection().preference()));
        }
        if (snapshot.discoveryProblem().isPresent()) {
            line.append("; ").append(shown(snapshot.discoveryProblem().get()));
        } else {
            snapshot.staleSince().ifPresent(t -> line.append("; discovery failing since ").append(t)
                    .append(" (candidates are the last good set)"));
        }
        return line.toString();
    }

    /** How many workers in {@code state} report each version, by version. */
    static SortedMap<String, Integer> versionsIn(FleetSnapshot snapshot, State state) {
        SortedMap<String, Integer> h = new TreeMap<>();
        for (WorkerStatus s : snapshot.statuses()) {
            if (s.state() == state) {
                s.info().ifPresent(i -> h.merge(i.version(), 1, Integer::sum));
            }
        }
        return h;
    }

    /** {@code compatible}, {@code draining}, {@code not serving}, ...: the state as a person writes it. */
    static String stateName(State state) {
        return state.name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }

    /** {@code compatible}, {@code rejected: <policy reason>}, {@code unreachable: <probe failure>}, {@code pending}. */
    /** {@code " (2 holders)"}, {@code " (1 holder)"}; {@code ""} for none or no count. */
    private static String holdersSuffix(WorkerStatus s) {
        int holders = s.holders().orElse(0);
        return holders == 0 ? "" : " (" + holders + (holders == 1 ? " holder)" : " holders)");
    }

    static String status(WorkerStatus s) {
        return status(s, "");
    }

    /**
     * As {@link #status(WorkerStatus)}, {@code after} the state's name: {@code draining (2 holders): ...}.
     * A worker left out for a requirement shows just what it lacks: {@code lacks udf:geo_distance}.
     */
    private static String status(WorkerStatus s, String after) {
        if (s.state() == State.LACKS_REQUIREMENT && !s.reason().isEmpty()) {
            return shown(s.reason());
        }
        String state = stateName(s.state()) + after;
        return s.reason().isEmpty() ? state : state + ": " + shown(s.reason());
    }

    /** {@code text} from a peer as a terminal may show it: escaped and bounded ({@link PeerText}). */
    static String shown(String text) {
        return PeerText.escape(text, MAX_TEXT_CHARS);
    }

    /** The version the worker reported, {@code (no version)} when it reported an empty one, {@code -} when it never answered. */
    private static String version(WorkerStatus s) {
        return s.info().map(i -> i.version().isEmpty() ? WorkerInfo.NO_VERSION : shown(i.version())).orElse("-");
    }

    /** {@code plan-protocol=3, udf:geo_distance}; {@code -} for none or a worker that never answered. */
    private static String capabilities(WorkerStatus s) {
        return s.info().filter(i -> !i.capabilities().isEmpty())
                .map(i -> shown(i.capabilities().toString())).orElse("-");
    }

    private static String shortInstance(String id) {
        if (id.isEmpty()) {
            return "-";
        }
        return shown(id.length() <= SHORT_INSTANCE ? id : id.substring(0, SHORT_INSTANCE));
    }

    private static String histogram(Map<String, Integer> versions) {
        if (versions.isEmpty()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        versions.forEach((v, n) -> parts.add((v.isEmpty() ? WorkerInfo.NO_VERSION : shown(v)) + " x" + n));
        return " (" + String.join(", ", parts) + ")";
    }

    /** Left-aligned columns two spaces apart, indented by two; the last column is not padded. */
    private static void printRows(PrintWriter out, List<String[]> rows) {
        int columns = rows.get(0).length;
        int[] widths = new int[columns];
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
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(0, width - s.length()));
    }
}
