package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerInfoTest {

    private static final WorkerEndpoint ENDPOINT = WorkerEndpoint.parse("grpc://w1:7001");

    @Test
    void ofHasVersionAndNothingElse() {
        WorkerInfo w = WorkerInfo.of(ENDPOINT, "1.4.2");

        assertThat(w.endpoint()).isEqualTo(ENDPOINT);
        assertThat(w.version()).isEqualTo("1.4.2");
        assertThat(w.instanceId()).isEmpty();
        assertThat(w.labels()).isEmpty();
        assertThat(w.services()).isEmpty();
    }

    @Test
    void labelsAndServicesAreImmutableCopies() {
        Map<String, String> labels = new HashMap<>(Map.of("zone", "a"));
        List<ServiceInfo> services = new ArrayList<>(List.of(ServiceInfo.of("s")));
        WorkerInfo w = new WorkerInfo(ENDPOINT, "1", "i-1", labels, services);

        labels.put("zone", "b");
        services.add(ServiceInfo.of("t"));

        assertThat(w.labels()).containsExactly(Map.entry("zone", "a"));
        assertThat(w.services()).extracting(ServiceInfo::name).containsExactly("s");
        assertThatThrownBy(() -> w.labels().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> w.services().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void rejectsNullRequiredFields() {
        assertThatThrownBy(() -> new WorkerInfo(null, "1", "i", Map.of(), List.of()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerInfo(ENDPOINT, null, "i", Map.of(), List.of()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WorkerInfo(ENDPOINT, "1", null, Map.of(), List.of()))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void toStringShowsUrlVersionAndInstance() {
        WorkerInfo w = new WorkerInfo(ENDPOINT, "2.0.0", "abc", Map.of(), List.of());

        assertThat(w).hasToString("grpc://w1:7001 version='2.0.0' instance=abc");
    }
}
