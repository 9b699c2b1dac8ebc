package dev.rollcall.discovery.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Timeout;

/**
 * A ZooKeeper node's data is written by whoever can write the path: any bytes become an endpoint
 * (whose claimed version obeys {@link WorkerEndpoint#versionLabelProblem}) that registration's
 * x-discovery encoding reads back the same, nothing (a disabled instance), or an
 * {@link IllegalArgumentException} whose reason is escaped and bounded.
 */
class WorkerNodeFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    @FuzzTest
    @Timeout(30)
    void nodeDataBecomesAnEndpointOrAReason(byte[] data) {
        Optional<WorkerEndpoint> endpoint;
        try {
            endpoint = WorkerNode.parse(data);
        } catch (IllegalArgumentException e) {
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        if (endpoint.isEmpty()) {
            return;
        }
        WorkerEndpoint e = endpoint.get();
        String claimed = e.labels().get(WorkerEndpoint.VERSION_LABEL);
        if (claimed != null) {
            assertThat(WorkerEndpoint.versionLabelProblem(claimed)).as("claimed version %s", PeerText.escape(claimed))
                    .isNull();
        }
        byte[] encoded = WorkerNode.encode(new WorkerInfo(e, "", "", Map.of(), List.of()), "workers", "w-1");
        assertThat(WorkerNode.parse(encoded)).contains(e);
    }
}
