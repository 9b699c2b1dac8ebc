package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SettingsTest {

    private static final String PREFIX = "rollcall.discovery.static.";

    /** The view a provider gets: scoped to {@code rollcall.discovery.static.}, holding {@code key=value}. */
    private static Settings scoped(String key, String value) {
        return Settings.of(Map.of(PREFIX + key, value)).scope("rollcall.").scope("discovery.static.");
    }

    private static Settings empty() {
        return Settings.of(Map.of()).scope(PREFIX);
    }

    // ---------------------------------------------------------------- keys and raw values

    @Test
    void fullKeyComposesNestedPrefixes() {
        Settings root = Settings.of(Map.of());

        assertThat(root.fullKey("a")).isEqualTo("a");
        assertThat(root.scope("rollcall.").fullKey("policy.type")).isEqualTo("rollcall.policy.type");
        assertThat(root.scope("rollcall.").scope("discovery.").scope("etcd.").fullKey("endpoints"))
                .isEqualTo("rollcall.discovery.etcd.endpoints");
    }

    @Test
    void scopedViewReadsOnlyItsOwnKeys() {
        Settings all = Settings.of(Map.of(
                "rollcall.discovery.etcd.endpoints", "e",
                "rollcall.discovery.static.endpoints", "s",
                "endpoints", "root"));

        assertThat(all.scope("rollcall.discovery.static.").raw("endpoints")).contains("s");
        assertThat(all.scope("rollcall.discovery.etcd.").raw("endpoints")).contains("e");
        assertThat(all.raw("endpoints")).contains("root");
        assertThat(all.scope("rollcall.discovery.consul.").raw("endpoints")).isEmpty();
    }

    @Test
    void rawStripsValue() {
        assertThat(scoped("k", "  v \t").raw("k")).contains("v");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t\n "})
    void rawTreatsBlankAsAbsent(String blank) {
        Settings s = scoped("k", blank);

        assertThat(s.raw("k")).isEmpty();
        assertThat(s.string("k", "dflt")).isEqualTo("dflt");
        assertThat(s.integer("k", 7, 0, 10)).isEqualTo(7);
        assertThat(s.bool("k", true)).isTrue();
        assertThat(s.duration("k", Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
        assertThat(s.list("k")).isEmpty();
    }

    @Test
    void rawIsAbsentForUnsetKey() {
        assertThat(empty().raw("nope")).isEmpty();
    }

    @Test
    void ofCopiesTheMap() {
        Map<String, String> source = new HashMap<>();
        source.put("k", "before");
        Settings s = Settings.of(source);

        source.put("k", "after");

        assertThat(s.raw("k")).contains("before");
    }

    // ---------------------------------------------------------------- string

    @Test
    void requiredStringReturnsStrippedValue() {
        assertThat(scoped("endpoints", " grpc://h:1 ").string("endpoints")).isEqualTo("grpc://h:1");
    }

    @Test
    void missingRequiredStringNamesFullKey() {
        ConfigurationException e = catchThrowableOfType(ConfigurationException.class,
                () -> empty().string("endpoints"));

        assertThat(e).isNotNull();
        assertThat(e.getMessage()).contains("rollcall.discovery.static.endpoints");
        assertThat(e.key()).isEqualTo("rollcall.discovery.static.endpoints");
    }

    @Test
    void blankRequiredStringIsMissing() {
        assertThatThrownBy(() -> scoped("endpoints", "   ").string("endpoints"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.static.endpoints");
    }

    @Test
    void stringWithDefault() {
        assertThat(empty().string("x", "d")).isEqualTo("d");
        assertThat(scoped("x", "v").string("x", "d")).isEqualTo("v");
    }

    // ---------------------------------------------------------------- integer

    @ParameterizedTest
    @CsvSource({"0, 0", "5, 5", "10, 10", "' 7 ', 7", "-0, 0"})
    void integerWithinBounds(String value, int expected) {
        assertThat(scoped("n", value).integer("n", 99, 0, 10)).isEqualTo(expected);
    }

    @Test
    void integerDefaultsWhenUnset() {
        assertThat(empty().integer("n", 42, 0, 100)).isEqualTo(42);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "11", "2147483648", "abc", "1.5", "5s", "1_0", "0x5"})
    void integerRejectsOutOfBoundsAndGarbageNamingKeyValueAndExpectation(String value) {
        ConfigurationException e = catchThrowableOfType(ConfigurationException.class,
                () -> scoped("n", value).integer("n", 1, 0, 10));

        assertThat(e).isNotNull();
        assertThat(e.getMessage())
                .contains("rollcall.discovery.static.n")
                .contains(value)
                .contains("whole number")
                .contains("0")
                .contains("10");
        assertThat(e.key()).isEqualTo("rollcall.discovery.static.n");
    }

    // ---------------------------------------------------------------- bool

    @ParameterizedTest
    @CsvSource({"true, true", "TRUE, true", "True, true", "false, false", "FALSE, false", "' false ', false"})
    void boolAcceptsTrueAndFalseInAnyCase(String value, boolean expected) {
        assertThat(scoped("b", value).bool("b", !expected)).isEqualTo(expected);
    }

    @Test
    void boolDefaultsWhenUnset() {
        assertThat(empty().bool("b", true)).isTrue();
        assertThat(empty().bool("b", false)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"yes", "no", "1", "0", "on", "t"})
    void boolRejectsAnythingElse(String value) {
        assertThatThrownBy(() -> scoped("b", value).bool("b", false))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.static.b")
                .hasMessageContaining("'" + value + "'")
                .hasMessageContaining("true or false");
    }

    // ---------------------------------------------------------------- duration

    @ParameterizedTest(name = "[{index}] ''{0}'' = {1}")
    @CsvSource(delimiter = '|', textBlock = """
            250ms    | PT0.25S
            2s       | PT2S
            5m       | PT5M
            1h       | PT1H
            1d       | PT24H
            10us     | PT0.00001S
            10ns     | PT0.00000001S
            0s       | PT0S
            PT2S     | PT2S
            pt0.5s   | PT0.5S
            P1D      | PT24H
            2S       | PT2S
            '  2s  ' | PT2S
            '2 s'    | PT2S
            ' PT1M ' | PT1M
            """)
    void durationParsesUnitsAndIso8601(String value, String expected) {
        assertThat(scoped("d", value).duration("d", null)).isEqualTo(Duration.parse(expected));
    }

    @Test
    void durationDefaultsWhenUnset() {
        assertThat(empty().duration("d", Duration.ofMillis(5))).isEqualTo(Duration.ofMillis(5));
    }

    @ParameterizedTest
    @ValueSource(strings = {"2", "2 sec", "-1s", "abc", "1.5s", "s", "p", "PT", "99999999999999999d",
            "999999999999999999h", "999999999999999999us", "9223372036854775807ns", "1234567890123456789s",
            "P99999999999999999D"})
    void durationRejectsMalformedValuesNamingKeyAndValue(String value) {
        ConfigurationException e = catchThrowableOfType(ConfigurationException.class,
                () -> scoped("d", value).duration("d", Duration.ZERO));

        assertThat(e).isNotNull();
        assertThat(e.getMessage())
                .contains("rollcall.discovery.static.d")
                .contains("'" + value + "'")
                .contains("duration");
        assertThat(e.key()).isEqualTo("rollcall.discovery.static.d");
    }

    @Test
    void durationsParseReturnsNullForNonDurations() {
        assertThat(Durations.parse("2")).isNull();
        assertThat(Durations.parse("99999999999999999d")).isNull();
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "0ms", "PT0S", "PT-1S"})
    void positiveDurationRejectsZeroAndNegative(String value) {
        assertThatThrownBy(() -> scoped("t", value).positiveDuration("t", Duration.ofSeconds(1)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.static.t")
                .hasMessageContaining("'" + value + "'")
                .hasMessageContaining("greater than zero");
    }

    @Test
    void positiveDurationAcceptsPositiveAndDefault() {
        assertThat(scoped("t", "1ns").positiveDuration("t", Duration.ofSeconds(1))).isEqualTo(Duration.ofNanos(1));
        assertThat(empty().positiveDuration("t", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
    }

    // ---------------------------------------------------------------- list

    @Test
    void listSplitsOnCommasStripsAndDropsEmpties() {
        assertThat(scoped("l", " a, ,b ,,c ,").list("l")).containsExactly("a", "b", "c");
        assertThat(scoped("l", "single").list("l")).containsExactly("single");
        assertThat(scoped("l", ",, ,").list("l")).isEmpty();
    }

    @Test
    void listIsEmptyWhenUnsetAndImmutable() {
        assertThat(empty().list("l")).isEmpty();
        List<String> items = scoped("l", "a,b").list("l");
        assertThatThrownBy(() -> items.add("c")).isInstanceOf(UnsupportedOperationException.class);
    }

    // ---------------------------------------------------------------- secrets in messages

    @ParameterizedTest
    @ValueSource(strings = {"etcd.password", "consul.token", "consul.acl-token", "tls.key", "auth.secret",
            "tls.private-key-file", "DB.PASSWORD"})
    void secretValuesAreMaskedInMessages(String key) {
        String secret = "hunter2-s3cr3t";
        ConfigurationException e = catchThrowableOfType(ConfigurationException.class,
                () -> scoped(key, secret).integer(key, 0, 0, 1));

        assertThat(e).isNotNull();
        assertThat(e.getMessage())
                .contains(PREFIX + key)
                .contains("****")
                .doesNotContain(secret);
        assertThat(e.key()).isEqualTo(PREFIX + key);
    }

    @ParameterizedTest
    @ValueSource(strings = {"timeout", "endpoints", "keyspace", "monkey"})
    void ordinaryValuesArePrintedInQuotes(String key) {
        ConfigurationException e = catchThrowableOfType(ConfigurationException.class,
                () -> scoped(key, "plain-value").integer(key, 0, 0, 1));

        assertThat(e).isNotNull();
        assertThat(e.getMessage()).contains("'plain-value'").doesNotContain("****");
    }
}
