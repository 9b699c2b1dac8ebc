package dev.rollcall.benchmarks;

import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The followers JVM of scenario 14 ({@link FleetService}): {@code FleetWatchersMain <port>} follows the
 * service on {@code 127.0.0.1:<port>} with plain grpc-java {@code WatchFleet} streams, as a coordinator
 * in another process would, and answers on standard input, one line each:
 * <ul>
 *   <li>{@code open <n> <perChannel> [changes]}: opens {@code n} streams, {@code perChannel} on each
 *       channel (one connection each), with {@code changes_only} when {@code changes} is given; answers
 *       {@code OPEN <n>} once every stream has its first snapshot (or {@code FAILED <status>});</li>
 *   <li>{@code publish <number> <micros>}: the service published {@code number} at {@code micros} (epoch
 *       µs); {@code latencies}: {@code LATENCIES <skipped> <ns,ns,...>}: for every stream and every
 *       published number it received, receipt minus publish, and how many (stream, number) pairs it
 *       never received (latest wins: skipped);</li>
 *   <li>{@code compatible <m>}: answers {@code COMPATIBLE} once every stream's newest snapshot lists
 *       {@code m} compatible workers; {@code upto <number>}: answers {@code UPTO <number>} once every
 *       stream has received that snapshot or a newer one; {@code received}: {@code RECEIVED <messages so
 *       far>}; {@code size}: {@code SIZE <bytes>} of the first stream's newest message;
 *       {@code cpu}: {@code CPU <nanos>} of this process; {@code close}: cancels every stream, closes
 *       the channels and forgets what they received, answers {@code CLOSED}.</li>
 * </ul>
 * Receipt is stamped on the channel's event loop ({@code directExecutor}) as the message is parsed.
 * Stops at the end of its input.
 */
public final class FleetWatchersMain {

    private static final long TIMEOUT_SECONDS = 180;

    private FleetWatchersMain() {
    }

    /** One stream: the numbers it received and when (epoch µs), and its newest compatible count. */
    private static final class Watch implements ClientResponseObserver<WatchFleetRequest, FleetSnapshot> {
        private long[] numbers = new long[64];
        private long[] micros = new long[64];
        private int size;
        private volatile int compatible = -1;
        private volatile long newest = -1;
        private volatile int bytes;
        private final CountDownLatch first;
        private final AtomicReference<String> failure;
        private ClientCallStreamObserver<WatchFleetRequest> call;

        Watch(CountDownLatch first, AtomicReference<String> failure) {
            this.first = first;
            this.failure = failure;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchFleetRequest> requestStream) {
            this.call = requestStream;
        }

        @Override
        public void onNext(FleetSnapshot snapshot) {
            long now = FleetServiceMain.micros(Instant.now());
            synchronized (this) {
                if (size == numbers.length) {
                    numbers = Arrays.copyOf(numbers, size * 2);
                    micros = Arrays.copyOf(micros, size * 2);
                }
                numbers[size] = snapshot.getNumber();
                micros[size++] = now;
            }
            compatible = snapshot.getCounts().getCompatible();
            newest = snapshot.getNumber();
            bytes = snapshot.getSerializedSize();
            first.countDown();
        }

        @Override
        public void onError(Throwable t) {
            failure.compareAndSet(null, io.grpc.Status.fromThrowable(t).toString());
            first.countDown();
        }

        @Override
        public void onCompleted() {
            failure.compareAndSet(null, "the service ended a WatchFleet stream");
            first.countDown();
        }

        synchronized int received() {
            return size;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        List<ManagedChannel> channels = new ArrayList<>();
        List<Watch> watches = new ArrayList<>();
        Map<Long, Long> published = new HashMap<>();
        AtomicReference<String> failure = new AtomicReference<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "open" -> {
                    int n = Integer.parseInt(w[1]);
                    int perChannel = Integer.parseInt(w[2]);
                    WatchFleetRequest request = WatchFleetRequest.newBuilder()
                            .setChangesOnly(w.length > 3 && w[3].equals("changes")).build();
                    CountDownLatch first = new CountDownLatch(n);
                    FleetServiceGrpc.FleetServiceStub stub = null;
                    for (int i = 0; i < n; i++) {
                        if (i % perChannel == 0) {
                            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                                    .directExecutor().maxInboundMessageSize(64 * 1024 * 1024).build();
                            channels.add(channel);
                            stub = FleetServiceGrpc.newStub(channel);
                        }
                        Watch watch = new Watch(first, failure);
                        watches.add(watch);
                        stub.watchFleet(request, watch);
                    }
                    boolean all = first.await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    answer(failure.get() != null ? "FAILED " + failure.get()
                            : all ? "OPEN " + n : "FAILED only " + (n - first.getCount()) + " of " + n + " streams"
                                    + " had a snapshot after " + TIMEOUT_SECONDS + " s");
                }
                case "publish" -> published.put(Long.parseLong(w[1]), Long.parseLong(w[2]));
                case "latencies" -> answer(latencies(watches, published));
                case "compatible" -> {
                    int m = Integer.parseInt(w[1]);
                    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(TIMEOUT_SECONDS))
                            .pollInterval(Duration.ofMillis(5))
                            .until(() -> failure.get() != null || watches.stream().allMatch(x -> x.compatible == m));
                    answer(failure.get() != null ? "FAILED " + failure.get() : "COMPATIBLE");
                }
                case "upto" -> {
                    long number = Long.parseLong(w[1]);
                    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(TIMEOUT_SECONDS))
                            .pollInterval(Duration.ofMillis(5))
                            .until(() -> failure.get() != null || watches.stream().allMatch(x -> x.newest >= number));
                    answer(failure.get() != null ? "FAILED " + failure.get() : "UPTO " + number);
                }
                case "size" -> answer("SIZE " + (watches.isEmpty() ? 0 : watches.get(0).bytes));
                case "received" -> answer("RECEIVED " + watches.stream().mapToLong(Watch::received).sum());
                case "cpu" -> answer("CPU " + Convergence.processCpu());
                case "close" -> {
                    watches.forEach(x -> x.call.cancel("the benchmark is done with it", null));
                    channels.forEach(ManagedChannel::shutdownNow);
                    for (ManagedChannel c : channels) {
                        c.awaitTermination(10, TimeUnit.SECONDS);
                    }
                    channels.clear();
                    watches.clear();
                    published.clear();
                    failure.set(null);
                    answer("CLOSED");
                }
                default -> throw new IllegalArgumentException("unknown command " + line);
            }
        }
        channels.forEach(ManagedChannel::shutdownNow);
        System.exit(0);
    }

    private static String latencies(List<Watch> watches, Map<Long, Long> published) {
        StringJoiner out = new StringJoiner(",");
        long skipped = 0;
        for (Watch x : watches) {
            synchronized (x) {
                int got = 0;
                for (int i = 0; i < x.size; i++) {
                    Long at = published.get(x.numbers[i]);
                    if (at != null) {
                        out.add(String.valueOf((x.micros[i] - at) * 1_000));
                        got++;
                    }
                }
                skipped += published.size() - got;
            }
        }
        return "LATENCIES " + skipped + " " + out;
    }

    private static void answer(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
