package dev.rollcall.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A probe that timed out must not doom the retries: the connection it went over can be wedged
 * (accepted by the kernel, never served: a server out of file descriptors, a hung proxy), and gRPC
 * keeps such a connection forever. The retry goes over a new one.
 */
class ProbeRetryConnectionTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void retriesOverANewConnectionWhenTheFirstOneNeverAnswered() throws Exception {
        CompletableFuture<CandidateListener> listener = new CompletableFuture<>();
        WorkerDiscovery discovery = new WorkerDiscovery() {
            @Override
            public void start(CandidateListener l) {
                listener.complete(l);
            }

            @Override
            public void close() {
            }
        };
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start();
             FirstConnectionSwallowed proxy = new FirstConnectionSwallowed(worker.endpoint().port());
             WorkerResolver resolver = WorkerResolver.builder().name("wedged").discovery(discovery)
                     .policy(w -> Verdict.accept())
                     .probeTimeout(Duration.ofMillis(500))
                     .backoff(Duration.ofMillis(100), Duration.ofMillis(200))
                     .build()) {
            WorkerEndpoint viaProxy = WorkerEndpoint.of("127.0.0.1", proxy.port());
            listener.get(5, TimeUnit.SECONDS).onCandidates(Set.of(viaProxy));

            FleetSnapshot failedOnce = resolver.await(s -> s.counts().unreachable() == 1, WAIT);
            assertThat(failedOnce.status(viaProxy.url()).orElseThrow().reason()).startsWith("DEADLINE_EXCEEDED");

            FleetSnapshot answered = resolver.await(s -> s.counts().compatible() == 1, WAIT);
            assertThat(answered.status(viaProxy.url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
            assertThat(proxy.connections()).isGreaterThanOrEqualTo(2);
        }
    }

    /** Accepts every connection; swallows the first (never reads, answers or closes it), forwards the rest. */
    private static final class FirstConnectionSwallowed implements AutoCloseable {
        private final ServerSocket server;
        private final int target;
        private final AtomicInteger accepted = new AtomicInteger();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        FirstConnectionSwallowed(int target) throws IOException {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            this.target = target;
            daemon("rollcall-test-proxy-accept", this::acceptForever);
        }

        int port() {
            return server.getLocalPort();
        }

        int connections() {
            return accepted.get();
        }

        private void acceptForever() {
            while (!server.isClosed()) {
                try {
                    Socket in = server.accept();
                    sockets.add(in);
                    if (accepted.incrementAndGet() == 1) {
                        continue; // wedged: the kernel accepted it, nobody serves it
                    }
                    Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
                    sockets.add(out);
                    daemon("rollcall-test-proxy-up", () -> pump(in, out));
                    daemon("rollcall-test-proxy-down", () -> pump(out, in));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private static void pump(Socket from, Socket to) {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException closed) {
                // one side went away: the test is over or the resolver closed its channel
            }
        }

        private static void daemon(String name, Runnable body) {
            Thread t = new Thread(body, name);
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
