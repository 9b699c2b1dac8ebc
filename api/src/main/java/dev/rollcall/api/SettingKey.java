package dev.rollcall.api;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * One configuration key, declared once: its full name, kind of value, default, bounds, one-line
 * documentation and the module that reads it. Reading ({@link Settings#get}), checking a value
 * given in code ({@link #check}), the unknown-key report, the Spring Boot metadata and the docs'
 * tables all come from this declaration, so that a default or a bound is written in one place.
 * Each module lists its keys in a {@link KeyCatalog}.
 *
 * <pre>{@code
 * static final SettingKey<Duration> TIMEOUT = SettingKey.define("rollcall-core", "rollcall.probe.timeout",
 *         SettingType.DURATION, "deadline of each probe, connection included")
 *     .byDefault(Duration.ofSeconds(2)).above(Duration.ZERO);
 * }</pre>
 *
 * <p>Immutable and thread-safe; the methods that refine a declaration return a new key.
 *
 * @param <T> the Java type of the value
 */
public final class SettingKey<T> {

    private final String module;
    private final String name;
    private final SettingType<T> type;
    private final String doc;
    private final T defaultValue;
    private final String defaultText;
    private final T min;
    private final boolean minExclusive;
    private final T max;
    private final List<String> allowed;

    private SettingKey(String module, String name, SettingType<T> type, String doc, T defaultValue,
                       String defaultText, T min, boolean minExclusive, T max, List<String> allowed) {
        this.module = module;
        this.name = name;
        this.type = type;
        this.doc = doc;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.min = min;
        this.minExclusive = minExclusive;
        this.max = max;
        this.allowed = allowed;
    }

    /**
     * A key of {@code module} (its artifact, e.g. {@code rollcall-core}) with no default: unset
     * means off or absent, as {@code doc} says.
     */
    public static <T> SettingKey<T> define(String module, String name, SettingType<T> type, String doc) {
        Objects.requireNonNull(module, "module");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(doc, "doc");
        if (!name.startsWith("rollcall.") || name.endsWith(".") || name.isBlank()) {
            throw new IllegalArgumentException("setting name '" + name + "' is not a rollcall.* key");
        }
        return new SettingKey<>(module, name, type, doc, null, "unset", null, false, null, List.of());
    }

    /** This key with {@code value} used when unset. */
    public SettingKey<T> byDefault(T value) {
        Objects.requireNonNull(value, "value");
        return new SettingKey<>(module, name, type, doc, value, type.text(value), min, minExclusive, max, allowed);
    }

    /**
     * This key with a default computed where it is read (from the machine, another key), described
     * by {@code text} for docs and metadata.
     */
    public SettingKey<T> derivedDefault(String text) {
        return new SettingKey<>(module, name, type, doc, null, Objects.requireNonNull(text, "text"), min,
                minExclusive, max, allowed);
    }

    /** This key, which must be set: start-up fails naming it when it is not. */
    public SettingKey<T> required() {
        return derivedDefault("required");
    }

    /** This key with the least value allowed, {@code min} included. */
    public SettingKey<T> atLeast(T min) {
        return bounded(min, false, max);
    }

    /** This key with values greater than {@code min} only. */
    public SettingKey<T> above(T min) {
        return bounded(min, true, max);
    }

    /** This key with the greatest value allowed, {@code max} included. */
    public SettingKey<T> atMost(T max) {
        return bounded(min, minExclusive, max);
    }

    /** This text key with only these values allowed (exact, case-sensitive). */
    public SettingKey<T> oneOf(String... values) {
        return new SettingKey<>(module, name, type, doc, defaultValue, defaultText, min, minExclusive, max,
                List.of(values));
    }

    private SettingKey<T> bounded(T newMin, boolean exclusive, T newMax) {
        if (type.order() == null) {
            throw new IllegalArgumentException(name + ": a " + type + " has no bounds");
        }
        return new SettingKey<>(module, name, type, doc, defaultValue, defaultText, newMin, exclusive, newMax, allowed);
    }

    /** The full key, e.g. {@code rollcall.probe.timeout}. */
    public String name() {
        return name;
    }

    /** The artifact that reads this key, e.g. {@code rollcall-core}. */
    public String module() {
        return module;
    }

    /** The kind of value. */
    public SettingType<T> type() {
        return type;
    }

    /** One line of documentation. */
    public String doc() {
        return doc;
    }

    /** The default value, or {@code null} when there is none or it is derived where the key is read. */
    public T defaultValue() {
        return defaultValue;
    }

    /** The default as docs show it: the value's text ({@code 2s}), {@code unset}, {@code required} or a rule. */
    public String defaultText() {
        return defaultText;
    }

    /** Whether start-up fails when this key is not set. */
    public boolean isRequired() {
        return defaultValue == null && "required".equals(defaultText);
    }

    /** The least value allowed, or {@code null} when there is no lower bound. */
    public T min() {
        return min;
    }

    /** Whether {@link #min()} itself is refused (a bound such as "greater than zero"). */
    public boolean minExclusive() {
        return minExclusive;
    }

    /** The greatest value allowed, or {@code null} when there is no upper bound. */
    public T max() {
        return max;
    }

    /** The values allowed, or empty when any value of the type is. */
    public List<String> allowedValues() {
        return allowed;
    }

    /**
     * What a value must be, for messages: {@code a duration greater than 0s}, {@code a whole number
     * from 1 to 100000}, {@code one of rollcall, none}.
     */
    public String expected() {
        if (!allowed.isEmpty()) {
            return "one of " + String.join(", ", allowed);
        }
        String kind = type == SettingType.WHOLE_NUMBER ? "a whole number" : type == SettingType.DURATION
                ? "a duration" : type.expected();
        if (min != null && max != null && !minExclusive) {
            return kind + " from " + type.text(min) + " to " + type.text(max);
        }
        if (min != null && max != null) {
            return kind + " greater than " + type.text(min) + " and at most " + type.text(max);
        }
        if (min != null) {
            return kind + (minExclusive ? " greater than " : " of at least ") + type.text(min);
        }
        if (max != null) {
            return kind + " of at most " + type.text(max);
        }
        return type.expected();
    }

    /**
     * The value of {@code text} (as read from a source), checked against the bounds.
     *
     * @throws ConfigurationException naming the key, the value (escaped, bounded) and what was expected
     */
    public T parse(String text) {
        T value = type.parse(text);
        if (value == null) {
            // A duration's syntax is worth spelling out; a number's or a boolean's is not.
            boolean spell = type == SettingType.DURATION && !type.expected().equals(expected());
            throw ConfigurationException.invalid(name, text, expected() + (spell ? " (" + type.expected() + ")" : ""));
        }
        if (!fits(value)) {
            throw ConfigurationException.invalid(name, text, expected());
        }
        return value;
    }

    /**
     * {@code value}, given in code at {@code origin} (e.g. {@code WorkerResolver.Builder}), checked
     * at once against the bounds.
     *
     * @throws IllegalArgumentException naming the key, the value, the origin and what was expected
     * @throws NullPointerException     naming the key when {@code value} is null
     */
    public T check(T value, String origin) {
        Objects.requireNonNull(value, name);
        if (!fits(value) || (type == SettingType.TEXT && ((String) value).isBlank())) {
            throw new IllegalArgumentException(name + "=" + ConfigurationException.printable(name, type.text(value))
                    + " (" + origin + "): expected " + (type == SettingType.TEXT && allowed.isEmpty()
                    ? "a value that is not blank" : expected()));
        }
        return value;
    }

    private boolean fits(T value) {
        if (!allowed.isEmpty() && !allowed.contains(String.valueOf(value))) {
            return false;
        }
        Comparator<T> order = type.order();
        if (min != null) {
            int c = order.compare(value, min);
            if (c < 0 || (minExclusive && c == 0)) {
                return false;
            }
        }
        return max == null || order.compare(value, max) <= 0;
    }

    @Override
    public String toString() {
        return name + " (" + type + ", default " + defaultText + ")";
    }
}
