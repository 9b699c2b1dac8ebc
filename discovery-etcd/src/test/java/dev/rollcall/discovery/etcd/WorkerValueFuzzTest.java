package dev.rollcall.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * An etcd value is written by whoever can write the prefix: any bytes become an endpoint (whose
 * claimed version obeys {@link WorkerEndpoint#versionLabelProblem}) that registration's encoding
 * reads back the same, or an {@link IllegalArgumentException} whose reason is escaped and bounded.
 */
class WorkerValueFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    @FuzzTest
    @Timeout(30)
    void etcdValueBecomesAnEndpointOrAReason(byte[] value) {
        WorkerEndpoint endpoint;
        try {
            endpoint = WorkerValue.parse(value);
        } catch (IllegalArgumentException e) {
            assertThat(PeerText.isClean(e.getMessage())).as("escaped: %s", PeerText.escape(e.getMessage())).isTrue();
            assertThat(e.getMessage().length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        String claimed = endpoint.labels().get(WorkerEndpoint.VERSION_LABEL);
        if (claimed != null) {
            assertThat(WorkerEndpoint.versionLabelProblem(claimed)).as("claimed version %s", PeerText.escape(claimed))
                    .isNull();
        }
        // What registration writes for this endpoint reads back as it.
        byte[] encoded = WorkerValue.encode(new WorkerInfo(endpoint, "", "", Map.of(), List.of()));
        assertThat(WorkerValue.parse(encoded)).isEqualTo(endpoint);
    }
}
