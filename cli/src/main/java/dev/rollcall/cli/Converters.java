package dev.rollcall.cli;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.policy.SemverRangePolicy;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Picocli converters for the options Rollcall's commands share. A value they refuse becomes a
 * usage error (exit code 2) whose message picocli prefixes with the option or parameter it was
 * given for: {@code Invalid value for option '--timeout': '2' is not ...}.
 */
final class Converters {

    private Converters() {
    }

    /** A duration greater than zero, written as in the configuration: {@code 500ms}, {@code 2s}, {@code 1m}, {@code PT2S}. */
    static final class PositiveDuration implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                Duration d = Settings.of(Map.of("value", value)).positiveDuration("value", null);
                if (d != null) {
                    return d;
                }
            } catch (ConfigurationException e) {
                // Falls through to the message below, which does not mention the made-up key.
            }
            throw new TypeConversionException("'" + value + "' is not a duration greater than zero with a unit,"
                    + " such as 500ms, 2s, 1m or PT2S");
        }
    }

    /** An npm version range, checked as the {@code semver} policy checks it. */
    static final class Range implements ITypeConverter<SemverRangePolicy> {
        @Override
        public SemverRangePolicy convert(String value) {
            try {
                return SemverRangePolicy.of(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage()
                        + "; expected an npm range such as ^1.4.0, ~1.4.2, >=1.2.0 <2.0.0, 1.x or 1.4.0");
            }
        }
    }

    /** A label selector in Kubernetes' syntax; a malformed one names the position and what was expected. */
    static final class Selector implements ITypeConverter<dev.rollcall.api.labels.LabelSelector> {
        @Override
        public dev.rollcall.api.labels.LabelSelector convert(String value) {
            try {
                return dev.rollcall.api.labels.LabelSelector.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "': " + e.getMessage()
                        + "; expected a label selector such as env=prod,zone in (eu-1,eu-2)");
            }
        }
    }
}
