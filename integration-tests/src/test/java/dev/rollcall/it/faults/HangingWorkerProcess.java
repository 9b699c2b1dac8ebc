package dev.rollcall.it.faults;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;

/**
 * A worker process that takes probes and never answers them, for the test that kills a worker with
 * SIGKILL while a probe is in flight. Prints {@code LISTENING <port>} once serving and
 * {@code PROBED} when a probe arrives; runs until killed or its standard input closes.
 */
public final class HangingWorkerProcess {

    private HangingWorkerProcess() {
    }

    public static void main(String[] args) throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
                    @Override
                    public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> out) {
                        System.out.println("PROBED");
                        System.out.flush();
                        // Never answers: the probe stays in flight until this process dies.
                    }
                })
                .build()
                .start();
        System.out.println("LISTENING " + server.getPort());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Runs until the parent closes our input or kills us.
        }
        server.shutdownNow();
    }
}
