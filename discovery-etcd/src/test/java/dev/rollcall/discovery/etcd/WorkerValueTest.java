package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The documented value format: a URL alone, or JSON with the endpoint and labels. */
class WorkerValueTest {

    private static WorkerEndpoint parse(String value) {
        return WorkerValue.parse(value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsAPlainUrl() {
        assertThat(parse(" grpcs://Worker-1:7443\n")).isEqualTo(new WorkerEndpoint("worker-1", 7443, true, Map.of()));
    }

    @Test
    void readsJsonWithLabelsAndTheVersionAndIgnoresOtherFields() {
        WorkerEndpoint e = parse("{\"version\":\"1.4.0\",\"endpoint\":\"grpc://127.0.0.1:7001\","
                + "\"labels\":{\"zone\":\"eu-1\",\"rack\":\"7\"},\"extra\":{\"nested\":[1,2,{\"x\":null}]}}");
        assertThat(e).isEqualTo(WorkerEndpoint.parse("grpc://127.0.0.1:7001").withLabels(Map.of("zone", "eu-1", "rack", "7",
                WorkerEndpoint.VERSION_LABEL, "1.4.0")));
        assertThat(parse("{\"endpoint\":\"grpc://127.0.0.1:7001\",\"labels\":null}").labels()).isEmpty();
    }

    @Test
    void rejectsMalformedValuesSayingWhy() {
        assertThatThrownBy(() -> parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> parse("127.0.0.1:7001")).hasMessageContaining("no scheme");
        assertThatThrownBy(() -> parse("{\"labels\":{}}")).hasMessageContaining("no \"endpoint\"");
        assertThatThrownBy(() -> parse("{\"endpoint\":7001}")).hasMessageContaining("\"endpoint\" is not a string");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"labels\":[\"a\"]}"))
                .hasMessageContaining("\"labels\" is not an object");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"labels\":{\"a\":true}}"))
                .hasMessageContaining("label \"a\" is not a string");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\"")).hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\"} trailing")).hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"endpoint\":\"grpc://h:2\"}"))
                .hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> WorkerValue.parse(new byte[WorkerValue.MAX_BYTES + 1])).hasMessageContaining("bytes");
    }

    @Test
    void writesWhatItReads() {
        WorkerInfo self = new WorkerInfo(WorkerEndpoint.of("127.0.0.1", 7001), "1.4.0", "abc-123",
                Map.of("zone", "eu-1", "quote", "a\"b"), List.of());

        String json = new String(WorkerValue.encode(self), StandardCharsets.UTF_8);

        assertThat(json).isEqualTo("{\"endpoint\":\"grpc://127.0.0.1:7001\",\"labels\":{\"quote\":\"a\\\"b\","
                + "\"zone\":\"eu-1\"},\"version\":\"1.4.0\",\"instance_id\":\"abc-123\"}");
        Map<String, String> read = new java.util.HashMap<>(self.labels());
        read.put(WorkerEndpoint.INSTANCE_ID_LABEL, "abc-123");
        read.put(WorkerEndpoint.VERSION_LABEL, "1.4.0");
        assertThat(parse(json)).isEqualTo(self.endpoint().withLabels(read));
    }

    @Test
    void readsTheInstanceIdAsALabelSoThatARestartInPlaceIsNoticedFromEtcdAlone() {
        WorkerEndpoint e = parse("{\"endpoint\":\"grpc://127.0.0.1:7001\",\"instance_id\":\"p-2\"}");
        assertThat(e.labels()).containsEntry(WorkerEndpoint.INSTANCE_ID_LABEL, "p-2");
        assertThat(parse("{\"endpoint\":\"grpc://127.0.0.1:7001\",\"instance_id\":\"\"}").labels()).isEmpty();
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"instance_id\":7}"))
                .hasMessageContaining("\"instance_id\" is not a string");
    }

    @Test
    void readsTheVersionAsAClaimAndRefusesAHostileOneSayingWhichField() {
        assertThat(parse("{\"endpoint\":\"grpc://h:1\",\"version\":\"2.0.0-rc.1\"}").labels())
                .containsExactly(Map.entry(WorkerEndpoint.VERSION_LABEL, "2.0.0-rc.1"));
        assertThat(parse("{\"endpoint\":\"grpc://h:1\",\"version\":\"\"}").labels()).as("no claim").isEmpty();
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"version\":1.4}"))
                .hasMessageContaining("\"version\" is not a string");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"version\":\"1.4\\u001b[2J\"}"))
                .hasMessage("\"version\": the version '1.4\\u001b[2J' holds white space or a control character");
        assertThatThrownBy(() -> parse("{\"endpoint\":\"grpc://h:1\",\"version\":\"" + "1".repeat(257) + "\"}"))
                .hasMessageContaining("257 characters long (at most 256)");
    }
}
