package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One stream's sends: never an answer older than one sent, whichever thread offers what when. */
class WatchStreamTest {

    /** The call side of one stream, recording what is sent. */
    private static final class Call extends ServerCallStreamObserver<WorkerInfoResponse> {
        final List<WorkerInfoResponse> sent = new ArrayList<>();
        boolean ready = true;
        boolean completed;

        @Override
        public boolean isReady() {
            return ready;
        }

        @Override
        public void setOnReadyHandler(Runnable onReadyHandler) {
        }

        @Override
        public void disableAutoInboundFlowControl() {
        }

        @Override
        public void request(int count) {
        }

        @Override
        public void setMessageCompression(boolean enable) {
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public void setOnCancelHandler(Runnable onCancelHandler) {
        }

        @Override
        public void setCompression(String compression) {
        }

        @Override
        public void onNext(WorkerInfoResponse value) {
            sent.add(value);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
            completed = true;
        }
    }

    private static Answer answer(String zone) {
        return Answer.stamp(WorkerInfoResponse.newBuilder().setInstanceId("i").putLabels("zone", zone).build());
    }

    @Test
    void anAnswerOlderThanOneSentIsNeverSentNorOneSentTwice() {
        Answer older = answer("a");
        Answer newer = answer("b");
        Call call = new Call();
        WatchStream stream = new WatchStream(call, 0, System::nanoTime);

        stream.offer(newer); // e.g. a push that overtook a stream's first answer, read before it
        stream.offer(older);
        stream.offer(newer);

        assertThat(call.sent).containsExactly(newer.unary());
    }

    @Test
    void whileTheCallTakesNothingOnlyTheNewestAnswerWaitsWhateverOrderTheyCameIn() {
        Answer first = answer("a");
        Answer second = answer("b");
        Answer third = answer("c");
        Call call = new Call();
        WatchStream stream = new WatchStream(call, 2_000, System::nanoTime);
        call.ready = false;
        stream.offer(second);
        stream.offer(third);
        stream.offer(first);
        call.ready = true;
        stream.flush();

        assertThat(call.sent).singleElement().satisfies(r -> {
            assertThat(r.getRevision()).isEqualTo(third.revision());
            assertThat(r.getHeartbeatMillis()).as("the stream's grant").isEqualTo(2_000);
        });
    }

    @Test
    void endingSendsTheLastAnswerUnlessItWentOutAndNothingAfterwards() {
        Answer sent = answer("a");
        Answer last = answer("b");
        Call call = new Call();
        WatchStream stream = new WatchStream(call, 0, System::nanoTime);
        stream.offer(sent);
        call.ready = false; // a coordinator that does not read still gets the last answer, then the end
        stream.complete(last);
        stream.offer(answer("c"));

        assertThat(call.sent).extracting(WorkerInfoResponse::getRevision).containsExactly(sent.revision(), last.revision());
        assertThat(call.completed).isTrue();
    }
}
