package dev.rollcall.console;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A small JSON writer into one {@link StringBuilder}: objects, arrays, strings, numbers, booleans and
 * {@code null}, with commas placed for the caller. Strings are escaped for JSON and for a page that
 * might embed them: quote, backslash, every control character, {@code < > &}, DEL, C1 controls,
 * U+2028/U+2029 and bidirectional overrides are written {@code \\uXXXX}, so peer text reaches the
 * browser as data only. Not thread-safe; one writer per document.
 */
final class JsonWriter {

    /** The longest string written; longer peer text is cut and ends in {@code …}. */
    static final int MAX_STRING_CHARS = 2048;

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final StringBuilder out;
    /** Whether the next value in the current object or array needs a comma first. */
    private boolean comma;

    JsonWriter(int capacity) {
        this.out = new StringBuilder(capacity);
    }

    JsonWriter beginObject() {
        separate();
        out.append('{');
        comma = false;
        return this;
    }

    JsonWriter endObject() {
        out.append('}');
        comma = true;
        return this;
    }

    JsonWriter beginArray() {
        separate();
        out.append('[');
        comma = false;
        return this;
    }

    JsonWriter endArray() {
        out.append(']');
        comma = true;
        return this;
    }

    /** The name of the next member of an object. */
    JsonWriter name(String name) {
        separate();
        string(name, out);
        out.append(':');
        comma = false;
        return this;
    }

    JsonWriter value(String text) {
        separate();
        if (text == null) {
            out.append("null");
        } else {
            string(text, out);
        }
        comma = true;
        return this;
    }

    JsonWriter value(long number) {
        separate();
        out.append(number);
        comma = true;
        return this;
    }

    JsonWriter value(double number) {
        separate();
        out.append(Double.isFinite(number) ? Double.toString(number) : "null");
        comma = true;
        return this;
    }

    JsonWriter value(boolean flag) {
        separate();
        out.append(flag);
        comma = true;
        return this;
    }

    JsonWriter member(String name, String text) {
        return name(name).value(text);
    }

    JsonWriter member(String name, long number) {
        return name(name).value(number);
    }

    /** An object of string values, in the map's order. */
    JsonWriter member(String name, Map<String, String> values) {
        name(name).beginObject();
        values.forEach((k, v) -> name(k).value(v));
        return endObject();
    }

    /** A value written by another writer ({@link #text()}), as it is. */
    JsonWriter raw(String json) {
        separate();
        out.append(json);
        comma = true;
        return this;
    }

    String text() {
        return out.toString();
    }

    byte[] utf8() {
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    private void separate() {
        if (comma) {
            out.append(',');
        }
    }

    private static void string(String text, StringBuilder out) {
        out.append('"');
        int n = Math.min(text.length(), MAX_STRING_CHARS);
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || (c >= 0x7f && c <= 0x9f)
                    || c == '\u2028' || c == '\u2029' || (c >= '\u202a' && c <= '\u202e')
                    || (c >= '\u2066' && c <= '\u2069') || c == '\u200e' || c == '\u200f' || c == '\ufeff'
                    || (Character.isSurrogate(c) && !pairedSurrogate(text, i))) {
                out.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf])
                        .append(HEX[c >> 4 & 0xf]).append(HEX[c & 0xf]);
            } else {
                out.append(c);
            }
        }
        if (text.length() > n) {
            out.append('\u2026');
        }
        out.append('"');
    }

    /** A surrogate that is half of a valid pair (a lone one would not encode as UTF-8). */
    private static boolean pairedSurrogate(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < text.length() && i + 1 < MAX_STRING_CHARS && Character.isLowSurrogate(text.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
    }
}
