package dev.rollcall.benchmarks;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * The servers JVM of scenario 9: {@code AddressFleetMain <servers> <firstPort> <lastPort>} starts
 * {@code servers} gRPC servers, each bound to the wildcard address on one free port of
 * {@code firstPort..lastPort}, so that each answers for every loopback address {@code 127.x.y.z}
 * (Linux routes all of 127.0.0.0/8 to {@code lo}). Every address is a worker of its own: the
 * {@code WorkerInfo} answer is made from the connection's local address
 * ({@link Grpc#TRANSPORT_ATTR_LOCAL_ADDR}), with the version {@link #versionAt} gives that address
 * (a mixed fleet: 90 % {@code 1.0.0}, 10 % {@code 2.0.0}) and an instance id of its own per address
 * and port. A connection to a non-loopback address is refused ({@code PERMISSION_DENIED}): the
 * wildcard bind is only there to reach many loopback addresses with few sockets.
 *
 * <p>Prints {@code PORTS p1,p2,...}, then answers {@code answered} on standard input with
 * {@code ANSWERED <n>} ({@code WorkerInfo} calls answered so far) and {@code cpu} with {@code CPU <nanos>}
 * (this process's CPU time so far); stops at the end of its input.
 */
public final class AddressFleetMain {

    /** The first worker address; worker {@code i} is this address plus {@code i}. */
    static final int FIRST_ADDRESS = (127 << 24) | (1 << 16) | 1; // 127.1.0.1
    static final String ACCEPTED_VERSION = "1.0.0";
    static final String REJECTED_VERSION = "2.0.0";

    private static final Context.Key<InetSocketAddress> LOCAL = Context.key("rollcall-bench-local-address");

    private AddressFleetMain() {
    }

    /** The {@code i}-th worker address, {@code 127.1.0.1} upward; never outside 127.0.0.0/8. */
    static String address(int i) {
        int a = FIRST_ADDRESS + i;
        if (i < 0 || (a >>> 24) != 127) {
            throw new IllegalArgumentException("worker address #" + i + " is outside 127.0.0.0/8");
        }
        return (a >>> 24) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff);
    }

    /** The version the worker at the {@code i}-th address reports: every tenth is rejected by {@code ^1.0.0}. */
    static String versionAt(int i) {
        return i % 10 == 9 ? REJECTED_VERSION : ACCEPTED_VERSION;
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        int firstPort = Integer.parseInt(args[1]);
        int lastPort = Integer.parseInt(args[2]);
        AtomicLong answered = new AtomicLong();
        String nonce = UUID.randomUUID().toString().substring(0, 8);
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1,
                new DefaultThreadFactory("rollcall-bench-accept", true), NioIoHandler.newFactory());
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(Math.min(2, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("rollcall-bench-serve", true), NioIoHandler.newFactory());
        List<Server> servers = new ArrayList<>();
        try {
            for (int port = firstPort; servers.size() < count; port++) {
                if (port > lastPort) {
                    throw new IllegalStateException("only " + servers.size() + " of " + count + " ports free in "
                            + firstPort + ".." + lastPort);
                }
                Server server = NettyServerBuilder.forAddress(new InetSocketAddress(port))
                        .bossEventLoopGroup(boss)
                        .workerEventLoopGroup(loops)
                        .channelType(NioServerSocketChannel.class)
                        .directExecutor()
                        .addService(ServerInterceptors.intercept(new PerAddressWorkerInfo(nonce),
                                new LocalAddress(answered)))
                        .build();
                try {
                    servers.add(server.start());
                } catch (IOException taken) {
                    server.shutdownNow();
                }
            }
            System.out.println("PORTS " + servers.stream()
                    .map(s -> String.valueOf(((InetSocketAddress) s.getListenSockets().get(0)).getPort()))
                    .collect(Collectors.joining(",")));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("answered")) {
                    System.out.println("ANSWERED " + answered.get());
                    System.out.flush();
                } else if (line.equals("cpu")) {
                    System.out.println("CPU " + Convergence.processCpu());
                    System.out.flush();
                }
            }
        } finally {
            servers.forEach(Server::shutdownNow);
            for (Server s : servers) {
                s.awaitTermination(5, TimeUnit.SECONDS);
            }
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    /** Puts the connection's local address in the call's context, counts the call; refuses non-loopback ones. */
    private static final class LocalAddress implements ServerInterceptor {
        private final AtomicLong answered;

        LocalAddress(AtomicLong answered) {
            this.answered = answered;
        }

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                           ServerCallHandler<Q, A> next) {
            SocketAddress local = call.getAttributes().get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR);
            if (!(local instanceof InetSocketAddress inet) || !inet.getAddress().isLoopbackAddress()) {
                call.close(Status.PERMISSION_DENIED.withDescription("loopback addresses only, not " + local),
                        new Metadata());
                return new ServerCall.Listener<>() { };
            }
            answered.incrementAndGet();
            return Contexts.interceptCall(Context.current().withValue(LOCAL, inet), call, headers, next);
        }
    }

    /**
     * {@code WorkerInfo} answered for the address the call came in on; {@code WatchWorkerInfo} answers
     * the same once and stays open (no heartbeats granted, nothing pushed): the stream a kept channel
     * holds with the defaults.
     */
    private static final class PerAddressWorkerInfo extends WorkerServiceGrpc.WorkerServiceImplBase {
        private final String nonce;

        PerAddressWorkerInfo(String nonce) {
            this.nonce = nonce;
        }

        @Override
        public void workerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            observer.onNext(answer());
            observer.onCompleted();
        }

        private WorkerInfoResponse answer() {
            InetSocketAddress local = LOCAL.get();
            InetAddress address = local.getAddress();
            int index = address instanceof Inet4Address ? toInt(address) - FIRST_ADDRESS : -1;
            return WorkerInfoResponse.newBuilder()
                    .setVersion(index >= 0 ? versionAt(index) : ACCEPTED_VERSION)
                    .setInstanceId(address.getHostAddress() + ":" + local.getPort() + "-" + nonce)
                    .build();
        }

        @Override
        public void watchWorkerInfo(WorkerInfoRequest request, StreamObserver<WorkerInfoResponse> observer) {
            observer.onNext(answer());
        }

        private static int toInt(InetAddress address) {
            byte[] b = address.getAddress();
            return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
        }
    }
}
