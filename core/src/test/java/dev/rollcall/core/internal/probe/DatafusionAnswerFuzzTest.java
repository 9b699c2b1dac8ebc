package dev.rollcall.core.internal.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.datafusion.GetWorkerInfoResponse;
import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * A datafusion-distributed worker's {@code GetWorkerInfo} answer, whatever bytes it sends: protobuf
 * refuses them, or the version reaches the policy only when it is clean and bounded (the empty
 * version included: that protocol's answer of a worker that never set one), or the probe fails as a
 * malformed answer whose reason is escaped and bounded.
 */
class DatafusionAnswerFuzzTest {

    private static final WorkerEndpoint WORKER = WorkerEndpoint.of("127.0.0.1", 7001);

    @FuzzTest
    @Timeout(30)
    void answerBytesAreAVersionThePolicyJudgesOrAMalformedAnswer(byte[] bytes) {
        GetWorkerInfoResponse response;
        try {
            response = GetWorkerInfoResponse.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            return; // gRPC fails the call: the probe is a failed one, as for any undecodable answer
        }
        // As DatafusionProtocolProvider builds it from the answer.
        ProbeOutcome.Answered answer = new ProbeOutcome.Answered(
                new WorkerInfo(WORKER, response.getVersion(), "", Map.of(), List.of()), ServingState.SERVING);
        String problem = ProtocolTransport.problem(answer, ProbeCapabilities.Source.WORKER);
        String version = response.getVersion();
        if (problem == null) {
            assertThat(PeerText.isClean(version)).as("a version the policy sees is clean: %s",
                    PeerText.escape(version)).isTrue();
            assertThat(version.length()).as("and bounded").isLessThanOrEqualTo(AnswerCheck.MAX_VERSION_CHARS);
        } else {
            String reason = PeerText.escape(problem, 300);
            assertThat(PeerText.isClean(reason)).isTrue();
            assertThat(version.isEmpty()).as("the empty version is an answer, not a malformed one").isFalse();
        }
    }
}
