package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.junit.jupiter.api.Test;

/** The forms a worker's node may take, and what registration writes. */
class WorkerNodeTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsAPlainUrl() {
        assertThat(WorkerNode.parse(bytes(" grpc://10.0.0.5:7001\n"))).contains(WorkerEndpoint.of("10.0.0.5", 7001));
    }

    @Test
    void readsWhatCuratorsOwnSerializerWritesWithThePayloadsLabels() throws Exception {
        @SuppressWarnings({"rawtypes", "unchecked"})
        JsonInstanceSerializer<Map> serializer = new JsonInstanceSerializer<>(Map.class);
        @SuppressWarnings({"rawtypes", "unchecked"})
        ServiceInstance<Map> instance = (ServiceInstance) ServiceInstance.<Map>builder().name("workers").id("w1")
                .address("10.0.0.5").port(7001).payload(Map.of("labels", Map.of("zone", "eu-1"))).build();

        assertThat(WorkerNode.parse(serializer.serialize(instance)))
                .contains(new WorkerEndpoint("10.0.0.5", 7001, false, Map.of("zone", "eu-1")));
    }

    @Test
    void anSslPortMeansTlsThereAndAFlatPayloadGivesItsStringsAsLabels() {
        String json = "{\"name\":\"workers\",\"id\":\"w1\",\"address\":\"10.0.0.6\",\"port\":7001,\"sslPort\":7443,"
                + "\"payload\":{\"@class\":\"java.util.HashMap\",\"zone\":\"eu-2\",\"weight\":3},"
                + "\"registrationTimeUTC\":1,\"serviceType\":\"DYNAMIC\",\"uriSpec\":null}";

        assertThat(WorkerNode.parse(bytes(json)))
                .contains(new WorkerEndpoint("10.0.0.6", 7443, true, Map.of("zone", "eu-2")));
    }

    @Test
    void aDisabledInstanceIsNoCandidate() {
        assertThat(WorkerNode.parse(bytes("{\"address\":\"10.0.0.7\",\"port\":7001,\"enabled\":false}"))).isEmpty();
    }

    @Test
    void readsRollcallsOwnJson() {
        assertThat(WorkerNode.parse(bytes("{\"endpoint\":\"grpcs://10.0.0.8:7001\",\"labels\":{\"zone\":\"x\"}}")))
                .contains(new WorkerEndpoint("10.0.0.8", 7001, true, Map.of("zone", "x")));
    }

    @Test
    void saysWhatIsWrongWithAMalformedNode() {
        assertThatThrownBy(() -> WorkerNode.parse(new byte[0])).hasMessageContaining("no data");
        assertThatThrownBy(() -> WorkerNode.parse(bytes("{\"address\":"))).hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> WorkerNode.parse(bytes("{\"port\":7001}"))).hasMessageContaining("\"address\"");
        assertThatThrownBy(() -> WorkerNode.parse(bytes("{\"address\":\"a\"}"))).hasMessageContaining("sslPort");
        assertThatThrownBy(() -> WorkerNode.parse(bytes("{\"address\":\"a\",\"port\":\"x\"}")))
                .hasMessageContaining("\"port\"");
        assertThatThrownBy(() -> WorkerNode.parse(bytes("not a url"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @SuppressWarnings({"rawtypes", "unchecked"}) // Curator's payload type is the raw Map
    void registrationWritesAnInstanceCuratorReadsBack() throws Exception {
        WorkerInfo self = new WorkerInfo(new WorkerEndpoint("10.0.0.9", 7001, true, Map.of("rack", "r1")), "1.4.0",
                "i-1", Map.of("zone", "eu-1"), List.of());

        byte[] data = WorkerNode.encode(self, "workers", "10.0.0.9_7001");

        @SuppressWarnings({"rawtypes", "unchecked"})
        ServiceInstance<Map> back = new JsonInstanceSerializer<>(Map.class).deserialize(data);
        assertThat(back.getName()).isEqualTo("workers");
        assertThat(back.getId()).isEqualTo("10.0.0.9_7001");
        assertThat(back.getAddress()).isEqualTo("10.0.0.9");
        assertThat(back.getSslPort()).isEqualTo(7001);
        assertThat(back.getPort()).isNull();
        assertThat(back.getPayload()).containsEntry("version", "1.4.0").containsEntry("instanceId", "i-1")
                .containsEntry("labels", Map.of("rack", "r1", "zone", "eu-1"));
        assertThat(WorkerNode.parse(data)).contains(new WorkerEndpoint("10.0.0.9", 7001, true,
                Map.of("rack", "r1", "zone", "eu-1", WorkerEndpoint.VERSION_LABEL, "1.4.0")));
    }

    @Test
    void thePayloadsVersionIsTheClaimedVersionAndAHostileOneIsRefusedSayingWhichField() {
        String node = "{\"address\":\"10.0.0.5\",\"port\":7001,\"payload\":{\"labels\":{},\"version\":%s}}";
        assertThat(WorkerNode.parse(bytes(node.formatted("\"1.4.0\"")))).contains(new WorkerEndpoint("10.0.0.5", 7001,
                false, Map.of(WorkerEndpoint.VERSION_LABEL, "1.4.0")));
        assertThat(WorkerNode.parse(bytes(node.formatted("\"\""))).orElseThrow().labels()).as("no claim").isEmpty();
        assertThat(WorkerNode.parse(bytes("{\"endpoint\":\"grpc://h:1\",\"version\":\"2.0.0\"}")).orElseThrow()
                .labels()).containsExactly(Map.entry(WorkerEndpoint.VERSION_LABEL, "2.0.0"));
        assertThatThrownBy(() -> WorkerNode.parse(bytes(node.formatted("3"))))
                .hasMessage("\"payload.version\" is not a string");
        assertThatThrownBy(() -> WorkerNode.parse(bytes(node.formatted("\"1.4.0\\r\\nforged\""))))
                .hasMessage("\"payload.version\": the version '1.4.0\\r\\nforged' holds white space or a control"
                        + " character");
        assertThatThrownBy(() -> WorkerNode.parse(bytes(node.formatted("\"" + "1".repeat(300) + "\""))))
                .hasMessageContaining("300 characters long (at most 256)");
    }
}
