package dev.rollcall.server.xds;

import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.protocol.v1.WorkerServiceGrpc;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolverRegistry;
import io.grpc.stub.MetadataUtils;
import io.grpc.xds.XdsNameResolverProvider;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * grpc-java's own xDS client, as an application uses it: a channel on {@code xds:///NAME} whose
 * bootstrap names a Rollcall server, calling {@code WorkerInfo} on whichever worker xDS picks. Each
 * instance registers a scheme of its own (the bootstrap is given in code rather than through
 * {@code GRPC_XDS_BOOTSTRAP}, so that tests in one JVM can each have their server). Every call carries
 * {@link #CALLER}, so that a worker can tell the client's calls from the resolver's probes.
 */
public final class GrpcXdsClient implements AutoCloseable {

    /** The header each call of this client carries. */
    public static final Metadata.Key<String> CALLER = Metadata.Key.of("rollcall-test-xds-caller",
            Metadata.ASCII_STRING_MARSHALLER);

    private static final AtomicInteger SCHEMES = new AtomicInteger();

    private final XdsNameResolverProvider provider;
    private final ManagedChannel channel;

    private GrpcXdsClient(XdsNameResolverProvider provider, ManagedChannel channel) {
        this.provider = provider;
        this.channel = channel;
    }

    /** A channel on {@code xds:///name} (in a scheme of its own) whose control plane is {@code port}. */
    public static GrpcXdsClient dial(int port, String name) {
        String scheme = "rollcall-xds-test-" + SCHEMES.incrementAndGet();
        Map<String, ?> bootstrap = Map.of(
                "xds_servers", List.of(Map.of(
                        "server_uri", "127.0.0.1:" + port,
                        "channel_creds", List.of(Map.of("type", "insecure")),
                        "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "grpc-java-test-" + scheme));
        XdsNameResolverProvider provider = XdsNameResolverProvider.createForTest(scheme, bootstrap);
        NameResolverRegistry.getDefaultRegistry().register(provider);
        ManagedChannel channel = Grpc.newChannelBuilder(scheme + ":///" + name, InsecureChannelCredentials.create())
                .build();
        return new GrpcXdsClient(provider, channel);
    }

    /** One call, waiting for the channel to be ready; the answering worker's reply. */
    public WorkerInfoResponse call() {
        return stub(true).withDeadlineAfter(10, TimeUnit.SECONDS).workerInfo(WorkerInfoRequest.getDefaultInstance());
    }

    /** One call that fails at once (no wait-for-ready) when the channel has no worker to send it to. */
    public WorkerInfoResponse callFailingFast() {
        return stub(false).withDeadlineAfter(10, TimeUnit.SECONDS)
                .workerInfo(WorkerInfoRequest.getDefaultInstance());
    }

    /**
     * A {@code WatchWorkerInfo} stream on whichever worker xDS picks, open for at most
     * {@code seconds}: the worker's answer at once, then again on each change.
     */
    public Iterator<WorkerInfoResponse> watch(long seconds) {
        return stub(true).withDeadlineAfter(seconds, TimeUnit.SECONDS)
                .watchWorkerInfo(WorkerInfoRequest.getDefaultInstance());
    }

    private WorkerServiceGrpc.WorkerServiceBlockingStub stub(boolean waitForReady) {
        Metadata caller = new Metadata();
        caller.put(CALLER, "grpc-java");
        WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(
                ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(caller)));
        return waitForReady ? stub.withWaitForReady() : stub;
    }

    public ManagedChannel channel() {
        return channel;
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        NameResolverRegistry.getDefaultRegistry().deregister(provider);
    }
}
