package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PeerTextTest {

    @Test
    void aForgedLogLineStaysOnItsOwnLine() {
        String forged = "busy\n[main] INFO FORGED line \u001b[2J";
        String escaped = PeerText.escape(forged);
        assertThat(escaped).isEqualTo("busy\\n[main] INFO FORGED line \\u001b[2J");
        assertThat(escaped).doesNotContain("\n", "\u001b");
    }

    @Test
    void escapesEveryControlAndReorderingCharacter() {
        assertThat(PeerText.escape("a\rb\tc\u0000d\u007fe\u009bf")).isEqualTo("a\\rb\\tc\\u0000d\\u007fe\\u009bf");
        assertThat(PeerText.escape("x\u2028y\u2029z")).isEqualTo("x\\u2028y\\u2029z");
        assertThat(PeerText.escape("\u202eevil\u2066\u2069")).isEqualTo("\\u202eevil\\u2066\\u2069");
    }

    @Test
    void escapesDirectionMarksAndSurrogatesWithoutTheirPair() {
        assertThat(PeerText.escape("a\u200eb\u200fc\u061cd")).isEqualTo("a\\u200eb\\u200fc\\u061cd");
        assertThat(PeerText.escape("x\uD83Dy\uDE00z")).isEqualTo("x\\ud83dy\\ude00z");
        assertThat(PeerText.escape("ok \uD83D\uDE00")).isEqualTo("ok \uD83D\uDE00");
    }

    @Test
    void indexOfUncleanSaysWhereTheFirstCharacterToEscapeIs() {
        assertThat(PeerText.indexOfUnclean("zone-1")).isEqualTo(-1);
        assertThat(PeerText.indexOfUnclean("eu\u001b[31m")).isEqualTo(2);
        assertThat(PeerText.indexOfUnclean("\u202eabc")).isZero();
        assertThat(PeerText.isClean("a\tb")).isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            grpc://u:pa/ss@h:1                 | grpc://***@h:1
            grpc://u:p?ss@h:1                  | grpc://***@h:1
            grpc://u:p#ss@h:1                  | grpc://***@h:1
            grpc://u:p@ss@h:1/x                | grpc://***@h:1/x
            grpc://u:p%40ss@h:1                | grpc://***@h:1
            http://root:pw@127.0.0.1:2379      | http://***@127.0.0.1:2379
            u:p//ss@h:1                        | ***@h:1
            //u:p@h:1                          | //***@h:1
            "  grpc://u:p@h:1"                 | "  grpc://***@h:1"
            grpc://h:1                         | grpc://h:1
            grpc://@h:1                        | grpc://@h:1
            "http://a:1, http://u:p@b:2"       | http://***@b:2
            """)
    void maskUserInfoHidesEverythingBeforeTheLastAt(String text, String masked) {
        assertThat(PeerText.maskUserInfo(text)).isEqualTo(masked);
    }

    @Test
    void keepsOrdinaryTextAsItIs() {
        String text = "UNAVAILABLE: Connection refused: /127.0.0.1:7001 — zone éu-1 日本";
        assertThat(PeerText.escape(text)).isSameAs(text);
        assertThat(PeerText.isClean(text)).isTrue();
    }

    @Test
    void boundsTheLengthAndSaysHowMuchWasLeftOut() {
        String escaped = PeerText.escape("x".repeat(1000));
        assertThat(escaped).isEqualTo("x".repeat(256) + "...(744 more)");
        assertThat(PeerText.escape("abcdef", 3)).isEqualTo("abc...(3 more)");
    }

    @Test
    void neverSplitsASurrogatePair() {
        String text = "ab\uD83D\uDE00cd"; // an emoji at positions 2-3
        assertThat(PeerText.escape(text, 3)).isEqualTo("ab...(4 more)");
    }

    @Test
    void nullIsWrittenAsNull() {
        assertThat(PeerText.escape(null)).isEqualTo("null");
    }

    @Test
    void refusesABoundBelowOne() {
        assertThatThrownBy(() -> PeerText.escape("x", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxChars 0 is below 1");
    }
}
