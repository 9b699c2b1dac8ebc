package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The console's JSON writer: what a peer's text becomes on the wire, and that it parses back. */
class JsonWriterTest {

    private static String written(String text) {
        return new JsonWriter(64).beginObject().member("t", text).endObject().text();
    }

    private static String parsed(String json) {
        return ConsoleFleet.parse(json).get("t").asText();
    }

    @Test
    void markupControlsAndBidiOverridesAreEscapedAndParseBackUnchanged() {
        String hostile = "</script><b onmouseover=x>&amp;\u0000\u001b[31m\u007f\u009b\u2028\u2029\u202e\u2066\ufeff\"\\";
        String json = written(hostile);

        assertThat(json).doesNotContain("<", ">", "&", "\u0000", "\u001b", "\u007f", "\u009b", "\u2028", "\u2029",
                "\u202e", "\u2066", "\ufeff");
        assertThat(parsed(json)).isEqualTo(hostile);
    }

    @Test
    void aSurrogatePairIsKeptAndALoneSurrogateIsEscaped() {
        assertThat(written("zone \uD83C\uDF0D")).contains("\uD83C\uDF0D");
        String lone = "a\uD800b\uDC00c";
        String json = written(lone);
        assertThat(json).contains("\\ud800").contains("\\udc00");
        assertThat(parsed(json)).isEqualTo(lone);
    }

    @Test
    void aLongStringIsCutAndSaysSo() {
        String json = written("x".repeat(JsonWriter.MAX_STRING_CHARS + 10));
        assertThat(parsed(json)).hasSize(JsonWriter.MAX_STRING_CHARS + 1).endsWith("x\u2026");
    }

    @Test
    void commasArePlacedInNestedObjectsAndArrays() {
        String json = new JsonWriter(64).beginObject().member("a", 1).name("b").beginArray().value("x").value(2)
                .value(true).value((String) null).endArray().member("c", Map.of("k", "v")).name("d").beginObject()
                .endObject().endObject().text();

        assertThat(json).isEqualTo("{\"a\":1,\"b\":[\"x\",2,true,null],\"c\":{\"k\":\"v\"},\"d\":{}}");
        JsonNode node = ConsoleFleet.parse(json);
        assertThat(node.get("b")).hasSize(4);
    }
}
