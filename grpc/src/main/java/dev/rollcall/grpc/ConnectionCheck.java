package dev.rollcall.grpc;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The gate's question to one connection: a {@code WorkerInfo} call over a subchannel's own
 * connection ({@code subchannel.asChannel()}, as grpc's client-side health checking asks its
 * {@code Watch}), with the resolver's probe deadline and answer bound, and what its answer means:
 * whether the process at the other end of <em>that</em> connection is the one the current
 * snapshot accepted for the URL. Stateless; thread-safe.
 */
final class ConnectionCheck {

    private ConnectionCheck() {
    }

    /** What a check found out: the answer (within every bound), or why there is none. */
    sealed interface Result {
    }

    /** The process behind the connection answered. */
    record Answered(WorkerInfoResponse answer) implements Result {
    }

    /** No usable answer: timed out, failed, too large, malformed; {@code reason} says which. */
    record Failed(String reason) implements Result {
    }

    /**
     * Starts the call over {@code connection}; {@code done} gets its result once, on a gRPC thread.
     * The answer is bounded per call ({@code maxAnswerBytes}), whatever the channel's own limit.
     *
     * @return the call, to cancel it when the connection it asks about is gone
     */
    static ClientCall<WorkerInfoRequest, WorkerInfoResponse> start(Channel connection, Duration timeout,
                                                                   int maxAnswerBytes, Consumer<Result> done) {
        ClientCall<WorkerInfoRequest, WorkerInfoResponse> call = connection.newCall(
                WorkerServiceGrpc.getWorkerInfoMethod(), CallOptions.DEFAULT
                        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                        .withMaxInboundMessageSize(maxAnswerBytes));
        ClientCalls.asyncUnaryCall(call, WorkerInfoRequest.getDefaultInstance(), new StreamObserver<>() {
            private boolean answered;

            @Override
            public void onNext(WorkerInfoResponse response) {
                answered = true;
                String problem = AnswerCheck.problem(response);
                done.accept(problem == null ? new Answered(response) : new Failed("malformed answer: " + problem));
            }

            @Override
            public void onError(Throwable t) {
                done.accept(new Failed(ProbeFailures.describe(t, timeout)));
            }

            @Override
            public void onCompleted() {
                if (!answered) {
                    done.accept(new Failed("INTERNAL: WorkerInfo completed without a response"));
                }
            }
        });
        return call;
    }

    /**
     * Why a connection whose process gave {@code answer} must carry no call while {@code snapshot}
     * is current, or {@code null} when it may: the snapshot lists {@code url} as compatible, with
     * the instance id and version of the answer, and the process says it is serving.
     */
    static String refusal(FleetSnapshot snapshot, String url, WorkerInfoResponse answer) {
        String answered = "instance '" + PeerText.escape(answer.getInstanceId()) + "' (version '"
                + PeerText.escape(answer.getVersion()) + "')";
        Optional<WorkerInfo> accepted = snapshot.status(url)
                .filter(s -> s.state() == WorkerStatus.State.COMPATIBLE)
                .flatMap(WorkerStatus::info);
        if (accepted.isEmpty()) {
            return "this connection to " + url + " reached " + answered + ", and snapshot " + snapshot.number()
                    + " lists no compatible worker there";
        }
        WorkerInfo w = accepted.get();
        if (!w.instanceId().equals(answer.getInstanceId()) || !w.version().equals(answer.getVersion())) {
            return "this connection to " + url + " reached " + answered + ", not instance '"
                    + PeerText.escape(w.instanceId()) + "' (version '" + PeerText.escape(w.version())
                    + "') that snapshot " + snapshot.number() + " accepted there";
        }
        if (answer.getState() != ServingState.SERVING) {
            return "this connection to " + url + " reached " + answered + ", which says it is "
                    + answer.getState() + " (takes no new work)";
        }
        return null;
    }
}
