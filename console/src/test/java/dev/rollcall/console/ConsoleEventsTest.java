package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.WorkerFleet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code /api/events} read by a plain Java HTTP client (and by a raw socket that stops reading). */
class ConsoleEventsTest {

    @AutoClose
    final Closer closer = new Closer();

    /** One event stream, its {@code data:} documents collected by a thread of the test's own. */
    final class Stream implements AutoCloseable {
        final BlockingQueue<JsonNode> documents = new LinkedBlockingQueue<>();
        final HttpResponse<InputStream> response;
        private final Thread reader;

        Stream(ConsoleFleet f, RollcallConsole console) throws IOException, InterruptedException {
            response = f.http.send(HttpRequest.newBuilder(console.uri().resolve("/api/events"))
                    .timeout(Duration.ofSeconds(10)).header("Accept", "text/event-stream").GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            reader = new Thread(this::read, "console-test-sse-reader");
            reader.setDaemon(true);
            reader.start();
            closer.add(this);
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.startsWith("data: ")) {
                        documents.add(ConsoleFleet.parse(line.substring("data: ".length())));
                    }
                }
            } catch (IOException e) {
                // closed by the test or the console
            }
        }

        /** The first document, from now on, that satisfies {@code condition}. */
        JsonNode next(Predicate<JsonNode> condition) throws InterruptedException {
            long deadline = System.nanoTime() + ConsoleFleet.WAIT.toNanos();
            for (long left = ConsoleFleet.WAIT.toNanos(); left > 0; left = deadline - System.nanoTime()) {
                JsonNode d = documents.poll(left, TimeUnit.NANOSECONDS);
                if (d != null && condition.test(d)) {
                    return d;
                }
            }
            throw new AssertionError("no such event within " + ConsoleFleet.WAIT);
        }

        @Override
        public void close() throws IOException {
            response.body().close();
        }
    }

    private RollcallConsole console(ConsoleFleet f, int maxClients, Duration writeTimeout) {
        return closer.add(RollcallConsole.builder(f.resolver).maxClients(maxClients).writeTimeout(writeTimeout).start());
    }

    @Test
    void theStreamPushesANewFleetDocumentOnEverySnapshot() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0", "1.1.0");
        long settled = f.awaitSettled(2).number();
        RollcallConsole console = console(f, 4, Duration.ofSeconds(5));

        Stream s = new Stream(f, console);
        assertThat(s.response.statusCode()).isEqualTo(200);
        assertThat(s.response.headers().firstValue("Content-Type")).hasValueSatisfying(t ->
                assertThat(t).startsWith("text/event-stream"));
        JsonNode first = s.next(d -> true);
        assertThat(first.get("snapshot").asLong()).isGreaterThanOrEqualTo(settled);

        String url = f.worker(1).endpoint().url();
        f.worker(1).drain();
        long drained = f.await(sn -> sn.status(url).map(st -> st.state() == State.DRAINING).orElse(false)).number();
        JsonNode draining = s.next(d -> d.get("snapshot").asLong() >= drained);
        assertThat(ConsoleFleet.workerIn(draining, url).get("state").asText()).isEqualTo("draining");

        f.worker(1).resume();
        long resumed = f.await(sn -> sn.status(url).map(st -> st.state() == State.COMPATIBLE).orElse(false)).number();
        JsonNode back = s.next(d -> d.get("snapshot").asLong() >= resumed);
        assertThat(ConsoleFleet.workerIn(back, url).get("state").asText()).isEqualTo("compatible");
        assertThat(back.get("timeline").toString()).contains("resumed " + url);
    }

    @Test
    void streamsBeyondMaxClientsAreRefusedNamingTheKey() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        RollcallConsole console = console(f, 2, Duration.ofSeconds(5));

        Stream one = new Stream(f, console);
        Stream two = new Stream(f, console);
        one.next(d -> true);
        two.next(d -> true);
        assertThat(console.eventStreams()).isEqualTo(2);

        HttpResponse<String> third = f.get(console, "/api/events");
        assertThat(third.statusCode()).isEqualTo(503);
        assertThat(third.body()).contains("rollcall.console.max-clients").contains("2 event streams");
        assertThat(third.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(f.get(console, "/api/fleet").statusCode()).as("the JSON is still served").isEqualTo(200);
    }

    @Test
    void aBrowserThatStopsReadingIsDroppedAndTheOthersKeepGettingSnapshots() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        f.awaitSettled(1);
        // Long enough that the reading stream's own thread, on a machine shared with other builds, always
        // takes something of each document within it; the stalled one takes nothing at all.
        RollcallConsole console = console(f, 4, Duration.ofSeconds(2));
        Stream reading = new Stream(f, console);
        reading.next(d -> true);

        try (Socket stalled = new Socket()) {
            stalled.setReceiveBufferSize(4096);
            stalled.connect(console.address(), 5000);
            OutputStream out = stalled.getOutputStream();
            out.write(("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:" + console.address().getPort() + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            await().atMost(ConsoleFleet.WAIT).until(() -> console.eventStreams() == 2);

            // Large documents (long labels on many unreachable candidates) until the stalled one's
            // socket buffers are full and a write cannot finish.
            List<WorkerEndpoint> candidates = new ArrayList<>(f.fleet.endpoints());
            String padding = "x".repeat(2000);
            Map<String, String> labels = new HashMap<>();
            for (int i = 0; i < 8; i++) {
                labels.put("pad" + i, padding);
            }
            int round = 0;
            while (console.eventStreams() == 2) {
                assertThat(round).as("rounds of bigger documents before the stalled stream was dropped").isLessThan(400);
                for (int i = 0; i < 20; i++) {
                    candidates.add(nobody(candidates).withLabels(labels));
                }
                f.discovery.push(candidates);
                int expected = candidates.size();
                f.await(sn -> sn.counts().candidates() == expected);
                reading.next(d -> d.get("counts").get("candidates").asInt() >= expected);
                round++;
            }
            assertThat(console.eventStreams()).isEqualTo(1);

            // The reading stream still gets every new snapshot.
            candidates.add(nobody(candidates));
            f.discovery.push(candidates);
            int expected = candidates.size();
            long after = f.await(sn -> sn.counts().candidates() == expected).number();
            assertThat(reading.next(d -> d.get("snapshot").asLong() >= after).get("counts").get("candidates").asInt())
                    .isEqualTo(expected);
        }
    }

    @Test
    void closeEndsEveryThreadItStartedAndEveryStream() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, SemverRangePolicy.of("^1"), "1.0.0");
        ThreadCensus before = ThreadCensus.take();
        RollcallConsole console = RollcallConsole.serve(f.resolver, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Stream s = new Stream(f, console);
        s.next(d -> true);
        assertThat(ThreadCensus.take().names("rollcall-console-")).isNotEmpty();

        console.close();

        before.awaitNewThreadsEnded(Duration.ofSeconds(10), "rollcall-console-");
        await().atMost(ConsoleFleet.WAIT).alias("the stream ends").until(() -> !readerAlive(s));
        console.close(); // idempotent
    }

    /** A free loopback endpoint whose URL none of {@code taken} has (a free port may come up twice). */
    private static WorkerEndpoint nobody(List<WorkerEndpoint> taken) {
        while (true) {
            WorkerEndpoint e = WorkerFleet.freeEndpoint();
            if (taken.stream().noneMatch(t -> t.url().equals(e.url()))) {
                return e;
            }
        }
    }

    private static boolean readerAlive(Stream s) {
        return s.reader.isAlive();
    }
}
