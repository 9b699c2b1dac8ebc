package dev.rollcall.server.xds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw ADS client: one {@code StreamAggregatedResources} stream that sends exactly the
 * {@link DiscoveryRequest}s a test chooses (lies included) and queues what comes back. A client
 * made with {@link #unread} asks for no message at all, as a peer that never reads does, until
 * {@link #readAll()}. Thread-safe as far as tests need: requests are sent from the test's thread.
 */
public final class AdsClient implements AutoCloseable {

    public static final String LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
    public static final String RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    public static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    public static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    static final Duration WAIT = Duration.ofSeconds(20);
    private static final AtomicInteger NODES = new AtomicInteger();

    public final BlockingQueue<DiscoveryResponse> responses = new LinkedBlockingQueue<>();
    /** How the stream ended, once it has. */
    public final CompletableFuture<io.grpc.Status> ended = new CompletableFuture<>();
    private final ClientCall<DiscoveryRequest, DiscoveryResponse> call;
    private final Node node = Node.newBuilder().setId("raw-ads-" + NODES.incrementAndGet()).build();

    /** Names this client acknowledges every response with, once {@link #ackEverything} was called. */
    private volatile String[] acking;

    private AdsClient(Channel channel, boolean reads) {
        call = channel.newCall(AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod(), CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(DiscoveryResponse message) {
                responses.add(message);
                String[] names = acking;
                if (names != null) {
                    ack(message, names);
                }
                if (reads) {
                    call.request(1);
                }
            }

            @Override
            public void onClose(io.grpc.Status status, Metadata trailers) {
                ended.complete(status);
            }
        }, new Metadata());
        if (reads) {
            call.request(1);
        }
    }

    /** A stream that reads every response as it comes. */
    public static AdsClient open(Channel channel) {
        return new AdsClient(channel, true);
    }

    /** A stream that reads nothing until {@link #readAll()}. */
    public static AdsClient unread(Channel channel) {
        return new AdsClient(channel, false);
    }

    /** From now on, every response is acknowledged as it comes, keeping the subscription to {@code names}. */
    public void ackEverything(String... names) {
        acking = names;
    }

    /** From now on, every response is read. */
    public void readAll() {
        call.request(Integer.MAX_VALUE);
    }

    public Node node() {
        return node;
    }

    public synchronized void send(DiscoveryRequest request) {
        call.sendMessage(request);
    }

    /** A first request (no version, no nonce) for {@code names} of {@code type}. */
    public void subscribe(String type, String... names) {
        send(request(type, "", "", names));
    }

    /** Acknowledges {@code response}, keeping the subscription to {@code names}. */
    public void ack(DiscoveryResponse response, String... names) {
        send(request(response.getTypeUrl(), response.getVersionInfo(), response.getNonce(), names));
    }

    /** Rejects {@code response} with {@code reason}, keeping {@code lastGood} as the accepted version. */
    public void nack(DiscoveryResponse response, String lastGood, String reason, String... names) {
        send(request(response.getTypeUrl(), lastGood, response.getNonce(), names).toBuilder()
                .setErrorDetail(Status.newBuilder().setCode(3).setMessage(reason)).build());
    }

    public DiscoveryRequest request(String type, String version, String nonce, String... names) {
        return DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(type).setVersionInfo(version)
                .setResponseNonce(nonce).addAllResourceNames(List.of(names)).build();
    }

    /** The next response; fails the test when none comes within {@link #WAIT}. */
    public DiscoveryResponse next() throws InterruptedException {
        DiscoveryResponse r = responses.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(r).as("a response within " + WAIT + " (stream ended: " + ended.getNow(null) + ")").isNotNull();
        return r;
    }

    /** The next response of {@code type}; those of other types before it are left out. */
    public DiscoveryResponse next(String type) throws InterruptedException {
        DiscoveryResponse r = next();
        while (!r.getTypeUrl().equals(type)) {
            r = next();
        }
        return r;
    }

    /** How the stream ended; fails the test when it has not within {@link #WAIT}. */
    public io.grpc.Status awaitEnd() throws Exception {
        return ended.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** Whether the stream takes more requests without buffering them in this client. */
    public boolean isReady() {
        return call.isReady();
    }

    public void halfClose() {
        call.halfClose();
    }

    public void cancel() {
        call.cancel("the test lets go", null);
    }

    @Override
    public void close() {
        if (!ended.isDone()) {
            cancel();
        }
    }
}
