package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class WorkerEndpointTest {

    // ---------------------------------------------------------------- parse: accepted spellings

    @ParameterizedTest(name = "[{index}] ''{0}'' -> {1}:{2} tls={3}")
    @CsvSource(delimiter = '|', textBlock = """
            grpc://host:7001     | host | 7001  | false | grpc://host:7001
            grpcs://h:443        | h    | 443   | true  | grpcs://h:443
            http://h:80          | h    | 80    | false | grpc://h:80
            https://h:8443       | h    | 8443  | true  | grpcs://h:8443
            grpc://h:1           | h    | 1     | false | grpc://h:1
            grpc://h:65535       | h    | 65535 | false | grpc://h:65535
            grpc://10.0.0.7:7001 | 10.0.0.7 | 7001 | false | grpc://10.0.0.7:7001
            grpc://az.AZ-09_x:000007001 | az.az-09_x | 7001 | false | grpc://az.az-09_x:7001
            """)
    void acceptsSupportedSchemes(String text, String host, int port, boolean tls, String url) {
        WorkerEndpoint e = WorkerEndpoint.parse(text);

        assertThat(e.host()).isEqualTo(host);
        assertThat(e.port()).isEqualTo(port);
        assertThat(e.tls()).isEqualTo(tls);
        assertThat(e.url()).isEqualTo(url);
        assertThat(e.labels()).isEmpty();
    }

    @Test
    void treatsSchemeCaseInsensitivelyAndLowerCasesHost() {
        WorkerEndpoint e = WorkerEndpoint.parse("GRPC://Host:1");

        assertThat(e.host()).isEqualTo("host");
        assertThat(e.tls()).isFalse();
        assertThat(e.url()).isEqualTo("grpc://host:1");
        assertThat(WorkerEndpoint.parse("GrPcS://EXAMPLE.org:2").url()).isEqualTo("grpcs://example.org:2");
    }

    @Test
    void storesIpv6HostWithoutBracketsAndReBracketsInUrl() {
        WorkerEndpoint e = WorkerEndpoint.parse("grpc://[::1]:7001");

        assertThat(e.host()).isEqualTo("::1");
        assertThat(e.port()).isEqualTo(7001);
        assertThat(e.url()).isEqualTo("grpc://[::1]:7001");
    }

    @Test
    void lowerCasesIpv6Host() {
        WorkerEndpoint e = WorkerEndpoint.parse("grpcs://[2001:DB8::A]:443");

        assertThat(e.host()).isEqualTo("2001:db8::a");
        assertThat(e.url()).isEqualTo("grpcs://[2001:db8::a]:443");
    }

    @Test
    void urlBracketsIpv6HostGivenToConstructor() {
        assertThat(new WorkerEndpoint("fe80::1", 9, true, Map.of()).url()).isEqualTo("grpcs://[fe80::1]:9");
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc://h:7001/", "  grpc://h:7001", "grpc://h:7001  ", "\tgrpc://h:7001/\n"})
    void toleratesTrailingSlashAndSurroundingWhitespace(String text) {
        assertThat(WorkerEndpoint.parse(text).url()).isEqualTo("grpc://h:7001");
    }

    // ---------------------------------------------------------------- parse: rejected text

    @ParameterizedTest(name = "[{index}] ''{0}'' is rejected: {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            grpc://host        | no port
            grpc://host:       | no port
            grpc://[::1]       | no port
            grpc://host:0      | port 0 is outside 1..65535
            grpc://host:99999  | port 99999 is outside 1..65535
            tcp://h:1          | scheme 'tcp'
            grpc://h:1/path    | path ('/path')
            grpc://h:1//       | path
            grpc://h:1?x=1     | query
            grpc://h:1#frag    | fragment
            grpc://ho st:1     | white space
            grpc://hóst:1      | non-ASCII
            grpc://::1:7001    | brackets
            //h:1              | no scheme
            grpc://a~b:7001    | 'a~b' is not a valid host name or IPv4 address
            ://host:7001       | scheme '' is not one of grpc, grpcs, http, https
            grpc:///x:7001     | it has a path ('/x:7001')
            grpc://@host:7001  | it carries user info
            grpc://:7001       | it has no host
            grpc://-bad:7001   | '-bad' is not a valid host name
            grpc://bad!host:1  | 'bad!host' is not a valid host name
            grpc://[zz::1]:1   | 'zz::1' is not an IPv6 address
            grpc://[1234]:1    | '1234' is not an IPv6 address
            """)
    void rejectsMalformedEndpointNamingTextAndReason(String text, String reason) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'")
                .hasMessageContaining(reason);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            grpc://alice:s3cret@host:7000      | grpc://***@host:7000
            grpcs://alice@host:7000            | grpcs://***@host:7000
            grpc://alice:s3c@ret@host:7000     | grpc://***@host:7000
            alice:s3cret@host:7000             | ***@host:7000
            grpc://alice:s3cret@host:7000/path | grpc://***@host:7000/path
            """)
    void masksUserInfoInTheErrorAndNeverEchoesTheUserOrPassword(String text, String masked) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid worker endpoint '" + masked + "': ")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("alice").doesNotContain("s3c")
                        .doesNotContain("ret@"));
    }

    /**
     * A password may hold any character, the URL's delimiters too: the mask reaches the last
     * {@code @} whatever lies between, and no other part of the message quotes a piece of it
     * (the issue's repro: {@code grpc://u:pa/ss@h:1} showed {@code it has a path ('/ss@h:1')}).
     * Every reserved character of RFC 3986, percent-encoding, and the two that end an authority.
     */
    @ParameterizedTest(name = "[{index}] password with ''{0}''")
    @ValueSource(strings = {"/", "?", "#", "[", "]", "@", ":", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";",
            "=", "%40", "%2F", "%3F", "%23", "%25", "//", "/?#@", "\\", "~"})
    void masksAPasswordHoldingAnyReservedCharacter(String special) {
        String password = "pa" + special + "ss";
        for (String text : new String[] {"grpc://u:" + password + "@h:1", "grpcs://u:" + password + "@h:1/",
                "u:" + password + "@h:1", "  https://u:" + password + "@h:1?x=1"}) {
            assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                    .as(text)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("***@h:1")
                    .hasMessageContaining("it carries user info")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("ss@").doesNotContain("u:pa")
                            .doesNotContain(special + "ss"));
        }
    }

    /** The text may come from a backend: its control characters are escaped in the message, never repeated raw. */
    @Test
    void theMessageShowsTheTextEscapedAndBounded() {
        String forged = "grpc://h:1\n[main] INFO FORGED line \u001b[2J";
        assertThatThrownBy(() -> WorkerEndpoint.parse(forged))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'grpc://h:1\\n[main] INFO FORGED line \\u001b[2J'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\u001b"));

        String huge = "grpc://" + "h".repeat(1_000_000) + ":1";
        assertThatThrownBy(() -> WorkerEndpoint.parse(huge))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("its host is 1000000 characters long (at most 253)")
                .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(1_000));
    }

    /** Backends build endpoints from parts (a ZooKeeper node's JSON, a DNS answer): the host cannot carry a line break either. */
    @ParameterizedTest
    @ValueSource(strings = {"evil\nhost", "host\u001b[2J", "a b", "h/x", "h@x", "\u202ehost"})
    void constructorRejectsAHostWithACharacterNoHostHasShowingItEscaped(String host) {
        assertThatThrownBy(() -> new WorkerEndpoint(host, 1, false, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + PeerText.escape(host) + "'")
                .hasMessageContaining("has a character that no host name or IP address has")
                .satisfies(e -> assertThat(PeerText.isClean(e.getMessage())).isTrue());
        assertThatThrownBy(() -> new WorkerEndpoint("h".repeat(254), 1, false, Map.of()))
                .hasMessageContaining("is 254 characters long (at most 253)");
    }

    @Test
    void toStringShowsLabelsEscaped() {
        WorkerEndpoint e = WorkerEndpoint.parse("grpc://h:1").withLabels(Map.of("zone", "eu\n[main] INFO FORGED"));
        assertThat(e.toString()).isEqualTo("grpc://h:1 {zone=eu\\n[main] INFO FORGED}");
    }

    @Test
    void rejectsControlCharacter() {
        String text = "grpc://h:1" + (char) 7;

        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "\t\n"})
    void rejectsEmptyEndpoint(String text) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + PeerText.escape(text) + "'")
                .hasMessageContaining("empty");
    }

    @Test
    void rejectsNullEndpoint() {
        assertThatThrownBy(() -> WorkerEndpoint.parse(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void rejectsEndpointWithoutHost() {
        assertThatThrownBy(() -> WorkerEndpoint.parse("grpc://"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'grpc://'");
    }

    /** The reason must tell the user what is missing, not quote java.net.URI ("Expected authority"). */
    @Test
    void rejectsEndpointWithoutHostSayingTheHostIsMissing() {
        assertThatThrownBy(() -> WorkerEndpoint.parse("grpc://"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'grpc://'")
                .hasMessageContaining("host");
    }

    @ParameterizedTest
    @ValueSource(strings = {"host:7001", "localhost:7001", "10.0.0.1:7001"})
    void rejectsEndpointWithoutScheme(String text) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'");
    }

    /**
     * {@code host:port} is the most likely mistake; the message must say the scheme is missing
     * rather than call the host a scheme ("scheme 'host' is not one of ...").
     */
    @ParameterizedTest
    @ValueSource(strings = {"host:7001", "localhost:7001", "10.0.0.1:7001"})
    void rejectsEndpointWithoutSchemeSayingTheSchemeIsMissing(String text) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'")
                .hasMessageContaining("no scheme");
    }

    /** A port that is signed or does not fit an int is a bad port, not a bad host. */
    @ParameterizedTest
    @ValueSource(strings = {"grpc://h:-1", "grpc://h:+1", "grpc://h:4294967297", "grpc://h:x"})
    void rejectsUnparsablePortNamingThePort(String text) {
        assertThatThrownBy(() -> WorkerEndpoint.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'")
                .hasMessageContaining("port")
                .hasMessageNotContaining("no valid host");
    }

    // ---------------------------------------------------------------- constructor

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 65536, Integer.MAX_VALUE})
    void constructorRejectsPortOutsideRange(int port) {
        assertThatThrownBy(() -> new WorkerEndpoint("h", port, false, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(port))
                .hasMessageContaining("1..65535");
    }

    @Test
    void constructorRejectsBlankOrNullHostAndNullLabels() {
        assertThatThrownBy(() -> new WorkerEndpoint(" ", 1, false, Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new WorkerEndpoint(null, 1, false, Map.of()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerEndpoint("h", 1, false, null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void ofIsPlaintextWithoutLabels() {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 5000);

        assertThat(e.tls()).isFalse();
        assertThat(e.labels()).isEmpty();
        assertThat(e.url()).isEqualTo("grpc://127.0.0.1:5000");
    }

    // ---------------------------------------------------------------- identity

    @ParameterizedTest
    @ValueSource(strings = {"grpc://h:1", "http://h:1", "GRPC://H:1", " http://H:1/ "})
    void equivalentSpellingsAreTheSameEndpoint(String text) {
        WorkerEndpoint canonical = WorkerEndpoint.parse("grpc://h:1");
        WorkerEndpoint e = WorkerEndpoint.parse(text);

        assertThat(e.url()).isEqualTo("grpc://h:1");
        assertThat(e).isEqualTo(canonical).hasSameHashCodeAs(canonical);
    }

    @Test
    void tlsAndPlaintextOnSameHostAndPortAreDifferentEndpoints() {
        WorkerEndpoint plain = WorkerEndpoint.parse("grpc://h:1");
        WorkerEndpoint tls = WorkerEndpoint.parse("grpcs://h:1");

        assertThat(plain.url()).isNotEqualTo(tls.url());
        assertThat(plain).isNotEqualTo(tls);
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc://h:1", "grpcs://example.com:443", "grpc://[::1]:7001", "grpcs://[fe80::1]:2"})
    void urlRoundTripsThroughParse(String url) {
        WorkerEndpoint e = WorkerEndpoint.parse(url);

        assertThat(e.url()).isEqualTo(url);
        assertThat(WorkerEndpoint.parse(e.url())).isEqualTo(e);
    }

    @Test
    void withLabelsKeepsUrlAndReplacesLabels() {
        WorkerEndpoint plain = WorkerEndpoint.parse("grpcs://h:9");
        WorkerEndpoint labelled = plain.withLabels(Map.of("zone", "a"));

        assertThat(labelled.url()).isEqualTo(plain.url());
        assertThat(labelled.host()).isEqualTo("h");
        assertThat(labelled.port()).isEqualTo(9);
        assertThat(labelled.tls()).isTrue();
        assertThat(labelled.labels()).containsExactly(Map.entry("zone", "a"));
        assertThat(plain.labels()).isEmpty();

        WorkerEndpoint relabelled = labelled.withLabels(Map.of("node", "n1"));
        assertThat(relabelled.url()).isEqualTo(plain.url());
        assertThat(relabelled.labels()).containsExactly(Map.entry("node", "n1"));
    }

    @Test
    void labelsAreAnImmutableCopy() {
        Map<String, String> source = new HashMap<>();
        source.put("zone", "a");
        WorkerEndpoint e = new WorkerEndpoint("h", 1, false, source);
        WorkerEndpoint viaWith = WorkerEndpoint.of("h", 1).withLabels(source);

        source.put("zone", "b");
        source.put("extra", "x");

        assertThat(e.labels()).containsExactly(Map.entry("zone", "a"));
        assertThat(viaWith.labels()).containsExactly(Map.entry("zone", "a"));
        assertThatThrownBy(() -> e.labels().put("k", "v")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> viaWith.labels().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void toStringIsUrlPlusLabelsWhenAny() {
        WorkerEndpoint e = WorkerEndpoint.parse("grpc://h:1");

        assertThat(e).hasToString("grpc://h:1");
        assertThat(e.withLabels(Map.of("zone", "a"))).hasToString("grpc://h:1 {zone=a}");
    }

    @Test
    void aBracketedHostIsStoredWithoutBracketsAndEndpointsHashApart() {
        WorkerEndpoint e = new WorkerEndpoint("[::1]", 7001, false, Map.of());

        assertThat(e.host()).isEqualTo("::1");
        assertThat(e.url()).isEqualTo("grpc://[::1]:7001");
        assertThat(WorkerEndpoint.of("127.0.0.1", 7001).hashCode())
                .isNotEqualTo(WorkerEndpoint.of("127.0.0.1", 7002).hashCode());
    }

    // ---------------------------------------------------------------- the claimed version label

    @ParameterizedTest(name = "[{index}] ''{0}'' may be claimed")
    @ValueSource(strings = {"1.4.0", "v2", "1.4.0-rc.1+build.7", "2026.12.02_a"})
    void versionLabelProblem_acceptsVersionsAsRegistriesHoldThem(String version) {
        assertThat(WorkerEndpoint.versionLabelProblem(version)).isNull();
        assertThat(WorkerEndpoint.versionLabelProblem("9".repeat(WorkerEndpoint.MAX_VERSION_CHARS))).isNull();
    }

    @Test
    void versionLabelProblem_refusesAHostileValueEscapedAndBounded() {
        String forged = WorkerEndpoint.versionLabelProblem("1.4.0\nINFO forged \u001b[2J");
        assertThat(forged).isEqualTo("the version '1.4.0\\nINFO forged \\u001b[2J' holds white space or a control"
                + " character");
        assertThat(WorkerEndpoint.versionLabelProblem("1.4 .0")).contains("white space");
        assertThat(WorkerEndpoint.versionLabelProblem("1.4.0\u202e")).contains("\\u202e");
        String huge = WorkerEndpoint.versionLabelProblem("9".repeat(100_000));
        assertThat(huge).startsWith("the version is 100000 characters long (at most 256): '999")
                .hasSizeLessThan(150);
        assertThat(WorkerEndpoint.versionLabelProblem("")).contains("empty");
    }
}
