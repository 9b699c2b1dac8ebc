package dev.rollcall.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.core.ProbeOutcome;
import dev.rollcall.core.worker.RollcallWorker;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Where the probe client's work runs, over a real worker on loopback. */
class ProbeClientTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** The lane's thread, where the probe was started and where its answer came. */
    private record Threads(Thread lane, Thread started, Thread answered, ProbeOutcome outcome) {
    }

    @Test
    void channelsAreBuiltOnTheStarterThreadAndAnsweredOnTheirLane() throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").start();
             ProbeClient client = new ProbeClient("probe-lane-test", 1 << 20)) {
            List<ManagedChannel> channels = new ArrayList<>();
            List<CompletableFuture<Threads>> probes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Executor lane = client.lane();
                CompletableFuture<Thread> laneThread = new CompletableFuture<>();
                lane.execute(() -> laneThread.complete(Thread.currentThread()));
                CompletableFuture<Threads> probe = new CompletableFuture<>();
                client.starter().execute(() -> {
                    Thread started = Thread.currentThread();
                    ManagedChannel channel = client.open(worker.endpoint(), lane);
                    synchronized (channels) {
                        channels.add(channel);
                    }
                    client.watchFirst(channel, lane, worker.endpoint(), TIMEOUT, pushed -> { }, ended -> { }).first()
                            .whenComplete((outcome, impossible) -> probe.complete(
                                    new Threads(laneThread.join(), started, Thread.currentThread(), outcome)));
                });
                probes.add(probe);
            }
            try {
                for (CompletableFuture<Threads> probe : probes) {
                    Threads threads = probe.get(10, TimeUnit.SECONDS);
                    assertThat(threads.outcome()).isInstanceOf(ProbeOutcome.Answered.class);
                    // Built and started off the event loops, which only do the network I/O: event
                    // loops that also built channels answered handshakes late (see starter()).
                    assertThat(threads.started().getName()).startsWith("probe-lane-test-start");
                    // The connection, its call and its answer on the lane: no hop between event loops.
                    assertThat(threads.answered()).isSameAs(threads.lane());
                    assertThat(threads.lane().getName()).startsWith("probe-lane-test").doesNotContain("start");
                }
                // The lanes take turns over the client's event loop threads.
                assertThat(probes.stream().map(p -> p.join().lane()).distinct())
                        .hasSize(Math.min(2, Runtime.getRuntime().availableProcessors()));
            } finally {
                synchronized (channels) {
                    channels.forEach(ManagedChannel::shutdownNow);
                }
            }
        }
    }
}
