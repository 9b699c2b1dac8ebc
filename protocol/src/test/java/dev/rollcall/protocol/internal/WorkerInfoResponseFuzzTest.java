package dev.rollcall.protocol.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.OptionalInt;
import org.junit.jupiter.api.Timeout;

/**
 * A worker's answer is bytes from a peer: any bytes are refused by protobuf
 * ({@link InvalidProtocolBufferException}), refused by {@link AnswerCheck} with a reason that is
 * escaped and bounded, or become a {@link WorkerInfo} that converts back to the same answer.
 */
class WorkerInfoResponseFuzzTest {

    /** PeerText keeps at most 256 characters of a text, each at most 6 once escaped: no message grows with its input. */
    private static final int MAX_MESSAGE_CHARS = 2048;

    private static final WorkerEndpoint ENDPOINT = WorkerEndpoint.of("127.0.0.1", 7001);

    @FuzzTest
    @Timeout(30)
    void answerBytesAreRefusedWithAReasonOrRoundTrip(byte[] input) throws InvalidProtocolBufferException {
        WorkerInfoResponse answer;
        try {
            answer = WorkerInfoResponse.parseFrom(input);
        } catch (InvalidProtocolBufferException e) {
            return;
        }
        assertThat(WorkerInfoResponse.parseFrom(answer.toByteArray())).isEqualTo(answer);
        OptionalInt holders = WireFormat.holders(answer);
        holders.ifPresent(h -> assertThat(h).isNotNegative());
        WireFormat.fromWire(answer.getState());

        String problem = AnswerCheck.problem(answer);
        if (problem != null) {
            assertThat(PeerText.isClean(problem)).as("escaped: %s", PeerText.escape(problem)).isTrue();
            assertThat(problem.length()).as("bounded").isLessThanOrEqualTo(MAX_MESSAGE_CHARS);
            return;
        }
        WorkerInfo info = WireFormat.toWorkerInfo(ENDPOINT, answer);
        assertThat(info.version()).isEqualTo(answer.getVersion());
        assertThat(info.labels()).isEqualTo(answer.getLabelsMap());
        if (declarable(info)) {
            WorkerInfoResponse again = WireFormat.toResponse(info.version(), info.instanceId(), info.labels(),
                    info.services());
            assertThat(WireFormat.toWorkerInfo(ENDPOINT, again)).isEqualTo(info);
        }
    }

    /** A visibility this version does not know reads as UNKNOWN, which no worker may declare (toResponse refuses it). */
    private static boolean declarable(WorkerInfo info) {
        for (ServiceInfo s : info.services()) {
            if (s.visibility() == Visibility.UNKNOWN) {
                return false;
            }
            for (HandlerInfo h : s.handlers()) {
                if (h.visibility().orElse(Visibility.PUBLIC) == Visibility.UNKNOWN) {
                    return false;
                }
            }
        }
        return true;
    }
}
