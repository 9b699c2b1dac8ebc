package dev.rollcall.testkit;

import dev.rollcall.api.PeerText;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text made to fool a log, for tests that feed it to a door of Rollcall (a worker's answer or
 * status, a backend's value) and then search what was logged ({@link FinestLogCapture}): a line
 * break followed by what looks like a log line of its own, a carriage return, a terminal colour, a
 * NUL, the Unicode line separator and NEL. Arrived escaped ({@link PeerText#escape}), the forged
 * line stays inside the real one; arrived raw, {@link #rawInLog} finds it. Pure; thread-safe.
 */
public final class HostileText {

    /** What a forged line starts with after the raw line break; the door's name follows it. */
    public static final String FORGED = "[main] INFO dev.rollcall.FORGED ";

    /** The characters that must never reach a log raw (a raw line break is found by {@link #FORGED}). */
    private static final String RAW = "\r\u001b\u0000\u2028\u0085";

    private HostileText() {
    }

    /** Hostile text that names {@code door}, so that what reached the log says where it came from. */
    public static String forging(String door) {
        return door + "\n" + FORGED + door + "\r\u001b[31m\u0000\u2028\u0085!";
    }

    /**
     * Where a record of {@link FinestLogCapture#text()} begins: slf4j-simple's
     * {@code [time ][thread] LEVEL logger - }, or the capture's {@code logger LEVEL } for a
     * java.util.logging record. A forged line has no {@code " - "} after its logger: it stays part
     * of the record it was smuggled into.
     */
    private static final Pattern RECORD_START = Pattern.compile(
            "^(?:(?:\\S+ )?\\[[^\\]]*\\] (?:TRACE|DEBUG|INFO|WARN|ERROR) ([\\w.$]+) - "
                    + "|([\\w.$]+) (?:FINEST|FINER|FINE|CONFIG|INFO|WARNING|SEVERE) )");

    /**
     * As {@link #rawInLog(String)}, leaving out whole records (continuation lines included) of the
     * loggers named by {@code wireDumpLoggers} (logger names or their prefixes): libraries that
     * print what travels on the wire as it came, which the caller names and documents.
     */
    public static List<String> rawInLog(String log, Set<String> wireDumpLoggers) {
        StringBuilder kept = new StringBuilder(log.length());
        boolean skipping = false;
        for (String line : log.split("\n", -1)) { // not String.lines(): it splits on the CRs searched for
            Matcher start = RECORD_START.matcher(line);
            if (start.lookingAt()) {
                String logger = start.group(1) != null ? start.group(1) : start.group(2);
                skipping = wireDumpLoggers.stream().anyMatch(logger::startsWith);
            }
            if (!skipping) {
                kept.append(line).append('\n');
            }
        }
        return rawInLog(kept.toString());
    }

    /**
     * Every place in {@code log} where hostile text arrived raw: a line that begins with
     * {@link #FORGED}, or a carriage return, escape, NUL, line separator or NEL anywhere. Each
     * finding is the line around it, escaped so that the failure message can be read.
     */
    public static List<String> rawInLog(String log) {
        List<String> found = new ArrayList<>();
        int at = -1;
        while ((at = log.indexOf("\n" + FORGED, at + 1)) >= 0) {
            found.add("a forged line: " + around(log, at + 1));
        }
        for (int i = 0; i < log.length(); i++) {
            if (RAW.indexOf(log.charAt(i)) >= 0) {
                found.add(String.format("U+%04X: ", (int) log.charAt(i)) + around(log, i));
            }
        }
        return found;
    }

    /** The line before {@code at} and the text from it to the end of its line, escaped. */
    private static String around(String log, int at) {
        int start = log.lastIndexOf('\n', Math.max(0, at - 2));
        int end = log.indexOf('\n', at);
        return PeerText.escape(log.substring(start < 0 ? 0 : start + 1, end < 0 ? log.length() : end), 600);
    }
}
