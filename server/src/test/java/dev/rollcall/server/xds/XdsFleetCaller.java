package dev.rollcall.server.xds;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A coordinator as the docs page's grpc-java section writes it, run as a process of its own with
 * the bootstrap file in {@code GRPC_XDS_BOOTSTRAP}: dials {@code xds:///NAME}, calls
 * {@code WorkerInfo} until {@code DISTINCT} workers have answered, then {@code MORE} times again,
 * and prints {@code ANSWERED <version> <instance id>} per call; prints {@code FAILED <status>} and
 * exits 1 on a failed call. Arguments: {@code NAME DISTINCT MORE DEADLINE_SECONDS} (each call's).
 */
public final class XdsFleetCaller {

    private XdsFleetCaller() {
    }

    public static void main(String[] args) throws InterruptedException {
        ManagedChannel channel = Grpc.newChannelBuilder("xds:///" + args[0], InsecureChannelCredentials.create())
                .build();
        Metadata caller = new Metadata();
        caller.put(GrpcXdsClient.CALLER, "grpc-java-process");
        WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(caller)).withWaitForReady();
        int distinct = Integer.parseInt(args[1]);
        int more = Integer.parseInt(args[2]);
        long deadlineSeconds = Long.parseLong(args[3]);
        Set<String> instances = new HashSet<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try {
            while (instances.size() < distinct && System.nanoTime() < deadline) {
                instances.add(call(stub, deadlineSeconds));
            }
            for (int i = 0; i < more; i++) {
                call(stub, deadlineSeconds);
            }
        } catch (RuntimeException e) {
            System.out.println("FAILED " + e.getMessage());
            System.exit(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    private static String call(WorkerServiceGrpc.WorkerServiceBlockingStub stub, long deadlineSeconds) {
        WorkerInfoResponse answer = stub.withDeadlineAfter(deadlineSeconds, TimeUnit.SECONDS)
                .workerInfo(WorkerInfoRequest.getDefaultInstance());
        System.out.println("ANSWERED " + answer.getVersion() + " " + answer.getInstanceId());
        return answer.getInstanceId();
    }
}
