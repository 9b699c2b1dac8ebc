package dev.rollcall.core.internal;

import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.Map;

/**
 * Bounds on what a worker may say about itself. A {@code WorkerInfo} answer is at most
 * {@code rollcall.probe.max-response-bytes} on the wire, but the resolver keeps every answer for as
 * long as the worker is a candidate and writes its version and labels into logs and statuses: so
 * each field is bounded too, and text that could forge a log line (control characters) is refused.
 * A worker whose answer breaks a bound is left out, with the bound it broke as the reason; nothing
 * is silently cut or rewritten, so what the policy sees is exactly what the worker sent. Internal.
 */
public final class AnswerCheck {

    /** Longer than any real version string (semver with build metadata is rarely over 100). */
    public static final int MAX_VERSION_CHARS = 256;
    public static final int MAX_INSTANCE_ID_CHARS = 128;
    public static final int MAX_LABELS = 128;
    /** As a Kubernetes label key: a 253-character DNS prefix, '/', a 63-character name. */
    public static final int MAX_LABEL_KEY_CHARS = 317;
    public static final int MAX_LABEL_VALUE_CHARS = 1024;

    private AnswerCheck() {
    }

    /** What is wrong with {@code answer}, or {@code null} when it is within every bound. */
    public static String problem(WorkerInfoResponse answer) {
        String version = answer.getVersion();
        if (version.length() > MAX_VERSION_CHARS) {
            return "version is " + version.length() + " characters long (at most " + MAX_VERSION_CHARS + ")";
        }
        String bad = controlIn(version);
        if (bad != null) {
            return "version contains " + bad;
        }
        String instance = answer.getInstanceId();
        if (instance.length() > MAX_INSTANCE_ID_CHARS) {
            return "instance id is " + instance.length() + " characters long (at most " + MAX_INSTANCE_ID_CHARS + ")";
        }
        if ((bad = controlIn(instance)) != null) {
            return "instance id contains " + bad;
        }
        if (answer.getLabelsCount() > MAX_LABELS) {
            return answer.getLabelsCount() + " labels (at most " + MAX_LABELS + ")";
        }
        for (Map.Entry<String, String> label : answer.getLabelsMap().entrySet()) {
            String key = label.getKey();
            String shownKey = "'" + printable(key) + "'";
            if (key.isEmpty()) {
                return "a label has an empty key";
            }
            if (key.length() > MAX_LABEL_KEY_CHARS) {
                return "label key " + shownKey + " is " + key.length() + " characters long (at most "
                        + MAX_LABEL_KEY_CHARS + ")";
            }
            if ((bad = controlIn(key)) != null) {
                return "label key " + shownKey + " contains " + bad;
            }
            String value = label.getValue();
            if (value.length() > MAX_LABEL_VALUE_CHARS) {
                return "label " + shownKey + " has a value " + value.length() + " characters long (at most "
                        + MAX_LABEL_VALUE_CHARS + ")";
            }
            if ((bad = controlIn(value)) != null) {
                return "label " + shownKey + " has a value that contains " + bad;
            }
        }
        return null;
    }

    private static String controlIn(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                return String.format("a control character (U+%04X) at index %d", (int) c, i);
            }
        }
        return null;
    }

    /** At most 40 characters of {@code s}, control characters escaped: safe to log. */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && b.length() < 40; i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (b.length() >= 40 && s.length() > 40) {
            b.append("...");
        }
        return b.toString();
    }
}
