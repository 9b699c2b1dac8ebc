package dev.rollcall.conformance;

import static dev.rollcall.conformance.Answers.ms;
import static dev.rollcall.conformance.Answers.status;

import dev.rollcall.api.PeerText;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * W17: {@code grpc.reflection.v1} is recommended (not served: {@code UNIMPLEMENTED}); when served,
 * {@code list_services} answers within the call timeout.
 */
final class Reflection {

    private Reflection() {
    }

    static void check(Channel channel, long timeoutNanos, Findings f) throws InterruptedException {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        long start = System.nanoTime();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
                .withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse r) {
                        answer.complete(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(Status.INTERNAL.withDescription("ended without an answer").asException());
                    }
                });
        requests.onNext(ServerReflectionRequest.newBuilder().setListServices("*").build());
        try {
            // The call's own deadline ends this wait; the extra second only covers its delivery.
            ServerReflectionResponse r = answer.get(timeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
            requests.onCompleted();
            if (r.hasListServicesResponse()) {
                f.pass("W17", "reflection (v1) listed " + r.getListServicesResponse().getServiceCount() + " services in "
                        + ms(System.nanoTime() - start));
            } else if (r.hasErrorResponse()) {
                f.fail("W17", "reflection answered list_services with error " + r.getErrorResponse().getErrorCode() + ": "
                        + PeerText.escape(r.getErrorResponse().getErrorMessage(), 160));
            } else {
                f.fail("W17", "reflection answered list_services with another kind of answer");
            }
        } catch (ExecutionException e) {
            Status s = Status.fromThrowable(e.getCause());
            if (s.getCode() == Status.Code.UNIMPLEMENTED) {
                f.notImplemented("W17", "reflection is not served (UNIMPLEMENTED)");
            } else {
                f.fail("W17", "reflection's list_services failed: " + status(s));
            }
        } catch (TimeoutException e) {
            requests.onError(Status.CANCELLED.withDescription("no answer in time").asException());
            f.fail("W17", "reflection's list_services did not answer within " + ms(timeoutNanos));
        }
    }
}
