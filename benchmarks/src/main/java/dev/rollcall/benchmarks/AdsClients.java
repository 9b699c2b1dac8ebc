package dev.rollcall.benchmarks;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Plain ADS streams (state of the world) that subscribe as one grpc-java xDS channel does, each on a
 * connection of its own: the Listener named after the fleet, then, as each answer comes, its
 * RouteConfiguration, Cluster and ClusterLoadAssignment, acknowledging every answer. Cheaper than
 * as many real channels (no data-plane channel, no load balancer), and the same to the server: one
 * stream with four subscriptions per client. Not thread-safe; the streams' callbacks run on their
 * channels' event loops.
 */
final class AdsClients implements AutoCloseable {

    static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
    static final String ROUTE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    static final String ENDPOINTS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    private static final Duration WAIT = Duration.ofMinutes(3);

    private final int port;
    private final String fleet;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<Stream> streams = new ArrayList<>();
    private final AtomicReference<String> failure = new AtomicReference<>();
    /** Every assignment the first stream received: when ({@code nanoTime}) and its healthy endpoints. */
    private final List<Arrival> arrivals = new ArrayList<>();

    private record Arrival(long nanos, Set<String> healthy) {
    }

    AdsClients(int port, String fleet) {
        this.port = port;
        this.fleet = fleet;
    }

    /** One subscriber: what it asked for and the number of endpoints in the newest assignment it got. */
    private final class Stream implements StreamObserver<DiscoveryResponse> {
        private final Node node;
        private StreamObserver<DiscoveryRequest> requests;
        private volatile int endpoints = -1;
        private volatile boolean closed;
        private final boolean timed;

        Stream(int id) {
            this.timed = id == 0;
            this.node = Node.newBuilder().setId("rollcall-bench-ads-" + id).setUserAgentName("rollcall-bench").build();
        }

        void start(AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceStub stub) {
            requests = stub.streamAggregatedResources(this);
            subscribe(LISTENER, "", "");
        }

        private void subscribe(String type, String version, String nonce) {
            synchronized (this) {
                requests.onNext(DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(type).addResourceNames(fleet)
                        .setVersionInfo(version).setResponseNonce(nonce).build());
            }
        }

        @Override
        public void onNext(DiscoveryResponse response) {
            String type = response.getTypeUrl();
            // The ACK: the same names again, with the version and nonce just received.
            subscribe(type, response.getVersionInfo(), response.getNonce());
            if (response.getResourcesCount() == 0) {
                return; // the resource does not exist (yet): nothing to follow from it
            }
            switch (type) {
                case LISTENER -> subscribe(ROUTE, "", "");
                case ROUTE -> subscribe(CLUSTER, "", "");
                case CLUSTER -> subscribe(ENDPOINTS, "", "");
                case ENDPOINTS -> {
                    endpoints = count(response);
                    if (timed) {
                        arrived(new Arrival(System.nanoTime(), healthy(response)));
                    }
                }
                default -> failure.compareAndSet(null, "an answer of an unasked type " + type);
            }
        }

        @Override
        public void onError(Throwable t) {
            if (!closed) { // its own cancellation comes back here too
                failure.compareAndSet(null, "an ADS stream failed: " + Status.fromThrowable(t));
            }
        }

        @Override
        public void onCompleted() {
            failure.compareAndSet(null, "the server ended an ADS stream");
        }

        void close() {
            closed = true;
            synchronized (this) {
                requests.onError(Status.CANCELLED.withDescription("the benchmark is done with it").asException());
            }
        }
    }

    private static int count(DiscoveryResponse response) {
        try {
            ClusterLoadAssignment cla = response.getResources(0).unpack(ClusterLoadAssignment.class);
            return cla.getEndpointsList().stream().mapToInt(LocalityLbEndpoints::getLbEndpointsCount).sum();
        } catch (InvalidProtocolBufferException e) {
            return -2;
        }
    }

    private static Set<String> healthy(DiscoveryResponse response) {
        try {
            return response.getResources(0).unpack(ClusterLoadAssignment.class).getEndpointsList().stream()
                    .flatMap(l -> l.getLbEndpointsList().stream())
                    .filter(e -> e.getHealthStatus() == HealthStatus.HEALTHY)
                    .map(LbEndpoint::getEndpoint).map(e -> e.getAddress().getSocketAddress())
                    .map(a -> a.getAddress() + ":" + a.getPortValue()).collect(Collectors.toSet());
        } catch (InvalidProtocolBufferException e) {
            return Set.of();
        }
    }

    private synchronized void arrived(Arrival arrival) {
        arrivals.add(arrival);
    }

    /** Forgets the assignments received so far. */
    synchronized void resetArrivals() {
        arrivals.clear();
    }

    /**
     * How long after {@code t0} (nanoseconds) the first stream received an assignment, the first
     * since {@code t0}, in which {@code hostPort} is not {@code HEALTHY}; -1 if none yet.
     */
    synchronized long withoutAfter(long t0, String hostPort) {
        for (Arrival a : arrivals) {
            if (a.nanos() >= t0 && !a.healthy().contains(hostPort)) {
                return a.nanos() - t0;
            }
        }
        return -1;
    }

    /** Opens {@code n} more streams, one connection each; returns once each has an assignment of {@code endpoints}. */
    void open(int n, int endpoints) {
        for (int i = 0; i < n; i++) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor()
                    .maxInboundMessageSize(64 * 1024 * 1024).build();
            channels.add(channel);
            Stream stream = new Stream(streams.size());
            streams.add(stream);
            stream.start(AggregatedDiscoveryServiceGrpc.newStub(channel));
        }
        awaitEndpoints(endpoints);
    }

    /** Returns once every stream's newest assignment lists {@code endpoints}; throws when a stream failed. */
    void awaitEndpoints(int endpoints) {
        org.awaitility.Awaitility.await("every ADS stream has an assignment of " + endpoints + " endpoints")
                .atMost(WAIT).pollInterval(Duration.ofMillis(5))
                .until(() -> failure.get() != null || streams.stream().allMatch(s -> s.endpoints == endpoints));
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
    }

    /** The service's port. */
    int port() {
        return port;
    }

    /** Cancels every stream and closes the connections. */
    @Override
    public void close() {
        streams.forEach(Stream::close);
        channels.forEach(ManagedChannel::shutdownNow);
        try {
            for (ManagedChannel c : channels) {
                c.awaitTermination(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        channels.clear();
        streams.clear();
    }
}
