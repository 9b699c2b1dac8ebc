package dev.rollcall.policy;

import dev.rollcall.api.ConfigurationException;

/** Turns a range read from configuration into a policy, or a {@link ConfigurationException} naming the key. */
final class RangeSettings {

    static final String EXPECTED_RANGE =
            "an npm range such as ^1.4.0, ~1.4.2, >=1.2.0 <2.0.0, 1.x, 1.2.3 - 1.4 or ^1.4 || ^2";

    private RangeSettings() {
    }

    /**
     * The range under {@code fullKey}.
     *
     * @param value the whole value of the key, quoted in the message
     * @param range the part of it that is the range (the value itself, or one element of a list)
     */
    static SemverRangePolicy compile(String fullKey, String value, String range, boolean includePrerelease,
                                     String expected) {
        try {
            return SemverRangePolicy.create(range, includePrerelease);
        } catch (InvalidRangeException e) {
            String where = value.equals(range) ? "" : "element " + Printable.quote(range) + ": ";
            throw new ConfigurationException(fullKey, fullKey + "=" + ConfigurationException.printable(fullKey, value)
                    + ": " + where + e.getMessage() + "; expected " + expected, e);
        }
    }
}
