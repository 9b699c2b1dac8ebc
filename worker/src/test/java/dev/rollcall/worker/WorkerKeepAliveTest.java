package dev.rollcall.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ConnectivityState;
import io.grpc.InternalChannelz;
import io.grpc.InternalInstrumented;
import io.grpc.InternalWithLogId;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Liveness over a real connection, as a coordinator sets it up: HTTP/2 keepalive at grpc-java's
 * floor is permitted by the worker's server, and a watch stream that asks for heartbeats hears them.
 */
class WorkerKeepAliveTest {

    /**
     * A coordinator that only calls WorkerInfo now and then keeps its connection with keepalive at
     * grpc-java's floor (10 s; it cannot ping more often) and no call open: three pings and more
     * must pass without a {@code too_many_pings} GOAWAY, on the same connection. It takes the time
     * of three pings (about 31 s): a shorter permit in the test would not shorten it, as the client
     * cannot ping faster, so the test runs with the product's own permit (5 s).
     */
    @Test
    void aCoordinatorPingingAtGrpcsFloorWithNoCallOpenKeepsItsConnection() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext()
                    .keepAliveTime(10, TimeUnit.SECONDS).keepAliveTimeout(5, TimeUnit.SECONDS)
                    .keepAliveWithoutCalls(true).build();
            try {
                WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel);
                stub.withDeadlineAfter(10, TimeUnit.SECONDS).workerInfo(WorkerInfoRequest.getDefaultInstance());
                List<ConnectivityState> left = new CopyOnWriteArrayList<>();
                watchState(channel, ConnectivityState.READY, left);

                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                        .until(() -> !left.isEmpty() || keepAlivesSent(worker.port()) >= 3);

                assertThat(left).as("the channel never left READY (a GOAWAY would make it IDLE)").isEmpty();
                assertThat(connectionsTo(worker.port())).as("connections the worker's server holds").isEqualTo(1);
                assertThat(stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .workerInfo(WorkerInfoRequest.getDefaultInstance()).getInstanceId())
                        .isEqualTo(worker.instanceId());
                assertThat(left).isEmpty();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aWatchThatAsksForHeartbeatsHearsThemOverTheNetwork() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", worker.port()).usePlaintext().build();
            try {
                List<WorkerInfoResponse> heard = new CopyOnWriteArrayList<>();
                WorkerServiceGrpc.newStub(channel).watchWorkerInfo(
                        WorkerInfoRequest.newBuilder().setHeartbeatMillis(1_000).build(), new StreamObserver<>() {
                            @Override
                            public void onNext(WorkerInfoResponse value) {
                                heard.add(value);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
                await().atMost(Duration.ofSeconds(10)).until(() -> heard.size() >= 3);
                assertThat(heard).extracting(WorkerInfoResponse::getHeartbeatMillis).containsOnly(1_000);
                assertThat(heard).extracting(WorkerInfoResponse::getRevision).containsOnly(heard.get(0).getRevision());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** Notes in {@code left} every state {@code channel} moves to after {@code from}. */
    private static void watchState(ManagedChannel channel, ConnectivityState from, List<ConnectivityState> left) {
        channel.notifyWhenStateChanged(from, () -> {
            ConnectivityState now = channel.getState(false);
            left.add(now);
            watchState(channel, now, left);
        });
    }

    /** HTTP/2 keepalive pings sent by this JVM's client channels to {@code port}, from channelz. */
    private static long keepAlivesSent(int port) throws Exception {
        InternalChannelz channelz = InternalChannelz.instance();
        long sent = 0;
        for (InternalInstrumented<InternalChannelz.ChannelStats> root : channelz.getRootChannels(0, 10_000).channels) {
            InternalChannelz.ChannelStats stats = root.getStats().get();
            if (!stats.target.endsWith(":" + port)) {
                continue;
            }
            for (InternalWithLogId sub : stats.subchannels) {
                for (InternalWithLogId socket : channelz.getSubchannel(sub.getLogId().getId()).getStats().get().sockets) {
                    sent += channelz.getSocket(socket.getLogId().getId()).getStats().get().data.keepAlivesSent;
                }
            }
        }
        return sent;
    }

    /** Connections the server listening on {@code port} holds now, from channelz. */
    private static int connectionsTo(int port) throws Exception {
        InternalChannelz channelz = InternalChannelz.instance();
        for (InternalInstrumented<InternalChannelz.ServerStats> server : channelz.getServers(0, 10_000).servers) {
            for (InternalInstrumented<InternalChannelz.SocketStats> listen : server.getStats().get().listenSockets) {
                if (listen.getStats().get().local instanceof InetSocketAddress a && a.getPort() == port) {
                    return channelz.getServerSockets(server.getLogId().getId(), 0, 10_000).sockets.size();
                }
            }
        }
        throw new AssertionError("no server on port " + port);
    }
}
