package dev.rollcall.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rows of the results table and the notes under it. The ratio column is always "how many
 * times better Rollcall is": baseline ÷ Rollcall where less is better (time, probes, memory,
 * threads), Rollcall ÷ baseline where more is better; below 1 means the baseline is better.
 */
final class Report {

    /** One line of the table; every cell already formatted. */
    record Row(String scenario, String rollcall, String baseline, String ratio, String target, String met) {
    }

    private final List<Row> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    synchronized void add(Row row) {
        rows.add(row);
        System.out.println("  " + row.scenario() + ": Rollcall " + row.rollcall() + " | baseline " + row.baseline()
                + " | " + row.ratio() + " | target " + row.target() + " | " + row.met());
    }

    synchronized void note(String note) {
        notes.add(note);
        System.out.println("  note: " + note);
    }

    /** A row that a failed scenario leaves, so that the table says so instead of losing the line. */
    void failed(String scenario, Throwable e) {
        add(new Row(scenario, "failed: " + e, "", "", "", "no"));
    }

    /** The table and, under it, the notes on each scenario's setup and this run's counts. */
    synchronized String markdown() {
        StringBuilder b = new StringBuilder(table());
        if (!notes.isEmpty()) {
            b.append('\n');
            for (String n : notes) {
                b.append("* ").append(n).append('\n');
            }
        }
        return b.toString();
    }

    /**
     * The table alone: what {@code --write-doc} puts into BENCHMARKS.md, whose rows are explained
     * once beside it; the notes, a run's own setup and counts, stay in the logs' results file.
     */
    synchronized String table() {
        StringBuilder b = new StringBuilder();
        b.append("| scenario | Rollcall | baseline | ratio | target | met |\n");
        b.append("|---|---|---|---|---|---|\n");
        List<Row> ordered = new ArrayList<>(rows);
        ordered.sort(java.util.Comparator.comparing(r -> r.scenario().substring(0, 1))); // by scenario number, stable
        for (Row r : ordered) {
            b.append("| ").append(String.join(" | ", cell(r.scenario()), cell(r.rollcall()), cell(r.baseline()),
                    cell(r.ratio()), cell(r.target()), cell(r.met()))).append(" |\n");
        }
        return b.toString();
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }

    // ---- formatting

    /** {@code ×12.3}: baseline ÷ Rollcall, for things where less is better. */
    static String lessIsBetter(double rollcall, double baseline) {
        if (rollcall <= 0) {
            return baseline <= 0 ? "×1 (equal)" : "—";
        }
        return times(baseline / rollcall);
    }

    /** Rollcall ÷ baseline, for things where more is better. */
    static String moreIsBetter(double rollcall, double baseline) {
        return baseline <= 0 ? "—" : times(rollcall / baseline);
    }

    static String times(double x) {
        if (x >= 100) {
            return String.format(Locale.ROOT, "×%,.0f", x);
        }
        if (x >= 10) {
            return String.format(Locale.ROOT, "×%.1f", x);
        }
        return String.format(Locale.ROOT, "×%.2f", x);
    }

    static String duration(double nanos) {
        if (nanos < 1_000) {
            return String.format(Locale.ROOT, "%.1f ns", nanos);
        }
        if (nanos < 1_000_000) {
            return String.format(Locale.ROOT, "%.1f µs", nanos / 1e3);
        }
        if (nanos < 1e9) {
            return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    static String bytes(double b) {
        if (b < 10 * 1024) {
            return String.format(Locale.ROOT, "%,.0f B", b);
        }
        if (b < 10 * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024);
        }
        return String.format(Locale.ROOT, "%.1f MiB", b / 1024 / 1024);
    }

    static String count(double n) {
        return n == Math.rint(n) ? String.format(Locale.ROOT, "%,.0f", n) : String.format(Locale.ROOT, "%,.1f", n);
    }

    static String met(boolean met) {
        return met ? "yes" : "**no**";
    }
}
