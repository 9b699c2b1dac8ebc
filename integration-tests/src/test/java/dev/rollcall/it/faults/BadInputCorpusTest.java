package dev.rollcall.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.management.ThreadMXBean;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import dev.rollcall.testkit.ThreadCensus;
import dev.rollcall.local.WorkerFleet;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Bad input the existing tests did not already cover (the table in docs/guarantees.md lists where
 * the rest is tested): hostile or broken answers from workers, and configuration values of the
 * wrong type or unit given to a whole resolver. Each bad item is rejected or left out with a message
 * that names it, and everything else keeps working.
 */
class BadInputCorpusTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int TEN_MB = 10 * 1024 * 1024;

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    // ---------------------------------------------------------------- what workers report

    /**
     * Starts a good worker and one answering {@code answer}; returns the bad one's status once the
     * good one is served and the bad one has been left out.
     */
    private WorkerStatus excludedStatusOf(WorkerInfoResponse answer) throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        ScriptedWorker bad = closing(ScriptedWorker.answering(answer));
        WorkerResolver r = closing(WorkerResolver.builder().name("corpus").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).backoff(Duration.ofMillis(200), Duration.ofSeconds(1)).build());
        discovery.push(List.of(fleet.worker(0).endpoint(), bad.endpoint()));

        r.awaitWorkers(1, WAIT);
        FleetSnapshot s = r.await(snap -> snap.status(bad.endpoint().url())
                .map(st -> st.state() == State.UNREACHABLE).orElse(false), WAIT);
        assertThat(s.compatibleEndpoints()).containsExactly(fleet.worker(0).endpoint());
        return s.status(bad.endpoint().url()).orElseThrow();
    }

    private static WorkerInfoResponse.Builder answer() {
        return WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId("corpus");
    }

    /**
     * A 10 MB version string is refused by the message-size limit before it is decoded: the reason
     * says the answer was too large, and the probe threads never allocate anything near its size.
     */
    @Test
    void tenMegabyteVersionIsRefusedAsTooLargeWithoutBeingDecoded() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        ScriptedWorker hostile = closing(ScriptedWorker.answering(answer().setVersion("9".repeat(TEN_MB)).build()));
        WorkerResolver r = closing(WorkerResolver.builder().name("hostile").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).backoff(Duration.ofMillis(100), Duration.ofMillis(200)).build());
        discovery.push(List.of(fleet.worker(0).endpoint(), hostile.endpoint()));
        r.awaitWorkers(1, WAIT);
        await().atMost(WAIT).until(() -> hostile.probes() >= 1
                && r.pin().status(hostile.endpoint().url()).map(WorkerStatus::state).orElse(null) == State.UNREACHABLE);
        long allocatedBefore = allocatedByThreads("rollcall-probe-hostile");
        long probedBefore = hostile.probes();

        await().atMost(WAIT).until(() -> hostile.probes() >= probedBefore + 3); // three more 10 MB answers
        await().atMost(WAIT).until(() -> r.probesFailed() >= probedBefore + 3);
        long allocated = allocatedByThreads("rollcall-probe-hostile") - allocatedBefore;

        WorkerStatus status = r.pin().status(hostile.endpoint().url()).orElseThrow();
        assertThat(status.state()).isEqualTo(State.UNREACHABLE);
        assertThat(status.reason()).startsWith("RESOURCE_EXHAUSTED: answer too large")
                .contains("rollcall.probe.max-response-bytes").contains("1048576");
        assertThat(r.workers()).extracting(w -> w.endpoint().url()).containsExactly(fleet.worker(0).endpoint().url());
        // Decoding one answer would allocate over 10 MB on these threads (directExecutor: they decode).
        assertThat(allocated).as("bytes allocated by the probe threads for 3 hostile answers").isLessThan(TEN_MB);
    }

    private static long allocatedByThreads(String prefix) {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : ThreadCensus.take().threads(prefix)) {
            sum += threads.getThreadAllocatedBytes(t.getId());
        }
        return sum;
    }

    /** Within the message limit but absurd for a version: refused by the answer's own bounds. */
    @Test
    void versionLongerThanTwoHundredFiftySixCharactersIsAMalformedAnswer() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().setVersion("1.0.0-" + "x".repeat(500)).build());
        assertThat(s.reason()).isEqualTo("malformed answer: version is 506 characters long (at most 256)");
    }

    @Test
    void versionWithALineBreakCannotForgeALogLine() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().setVersion("1.0.0\n12:00:00 INFO worker is compatible").build());
        assertThat(s.reason()).isEqualTo("malformed answer: version contains a control character (U+000A) at index 5");
    }

    @Test
    void labelKeyWithAControlCharacterIsAMalformedAnswerNamingTheKey() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().putLabels("zone\u0007", "a").build());
        assertThat(s.reason()).isEqualTo(
                "malformed answer: label key 'zone\\u0007' contains a control character (U+0007) at index 4");
    }

    @Test
    void labelValueWithAControlCharacterIsAMalformedAnswerNamingTheLabel() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().putLabels("zone", "eu\u001b[31m").build());
        assertThat(s.reason()).isEqualTo(
                "malformed answer: label 'zone' has a value that contains a control character (U+001B) at index 2");
    }

    @Test
    void hugeLabelKeyIsAMalformedAnswerShownShortened() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().putLabels("k".repeat(100_000), "v").build());
        assertThat(s.reason()).isEqualTo("malformed answer: label key '" + "k".repeat(40)
                + "...(99960 more)' is 100000 characters long (at most 317)");
    }

    @Test
    void hugeLabelValueIsAMalformedAnswer() throws Exception {
        WorkerStatus s = excludedStatusOf(answer().putLabels("zone", "v".repeat(5_000)).build());
        assertThat(s.reason()).isEqualTo(
                "malformed answer: label 'zone' has a value 5000 characters long (at most 1024)");
    }

    @Test
    void tooManyLabelsIsAMalformedAnswer() throws Exception {
        WorkerInfoResponse.Builder b = answer();
        for (int i = 0; i < 1_000; i++) {
            b.putLabels("label-" + i, "v");
        }
        WorkerStatus s = excludedStatusOf(b.build());
        assertThat(s.reason()).isEqualTo("malformed answer: 1000 labels (at most 128)");
    }

    @Test
    void labelsWithinTheBoundsArePassedOnUnchanged() throws Exception {
        Map<String, String> labels = new HashMap<>();
        for (int i = 0; i < 128; i++) {
            labels.put("example.com/label-" + i, "zone é ü 区 " + i);
        }
        ScriptedWorker worker = closing(ScriptedWorker.answering(answer().putAllLabels(labels).build()));
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).build());
        discovery.push(List.of(worker.endpoint()));

        assertThat(r.awaitWorkers(1, WAIT).workers().get(0).labels()).isEqualTo(labels);
    }

    // ---------------------------------------------------------------- text from peers

    private static final String FORGED = "busy\n[main] INFO FORGED line \u001b[2J";

    /**
     * The repro: a worker answering {@code UNAVAILABLE} with a line break and a terminal
     * escape in its message. The coordinator's log (slf4j-simple, on {@code System.err}) gets no line
     * of the worker's making, and neither the status's reason nor the exception of a wait that
     * times out holds the raw newline or escape.
     */
    @Test
    void aWorkersErrorMessageCannotForgeALogLineOrReachAReasonRaw() throws Exception {
        ScriptedWorker forger = closing(ScriptedWorker.start((out, later) ->
                out.onError(io.grpc.Status.UNAVAILABLE.withDescription(FORGED).asRuntimeException())));
        String log;
        WorkerStatus status;
        String timedOut;
        try (StandardErrorCopy err = new StandardErrorCopy()) {
            WorkerResolver r = closing(WorkerResolver.builder().name("forged").discovery(discovery)
                    .policy(SemverRangePolicy.of("^1.0")).build());
            discovery.push(List.of(forger.endpoint()));
            FleetSnapshot s = r.await(snap -> snap.status(forger.endpoint().url())
                    .map(st -> st.state() == State.UNREACHABLE).orElse(false), WAIT);
            status = s.status(forger.endpoint().url()).orElseThrow();
            Throwable waited = org.assertj.core.api.Assertions.catchThrowable(() -> r.awaitWorkers(1,
                    Duration.ofMillis(200)));
            assertThat(waited).isInstanceOf(dev.rollcall.core.WorkersUnavailableException.class);
            timedOut = waited.getMessage();
            r.close(); // its last log lines are written before the copy stops
            log = err.text();
        }

        assertThat(log.lines()).noneMatch(line -> line.startsWith("[main] INFO FORGED"));
        assertThat(log).doesNotContain("\u001b");
        assertThat(log).as("the log line of the failure was written, escaped")
                .contains("is unreachable: UNAVAILABLE: busy\\n[main] INFO FORGED line \\u001b[2J");
        assertThat(status.reason()).isEqualTo("UNAVAILABLE: busy\\n[main] INFO FORGED line \\u001b[2J");
        assertThat(timedOut).contains("busy\\n[main] INFO FORGED").doesNotContain("\n", "\u001b");
    }

    /** What is written to {@code System.err} while it is open (slf4j-simple's log), still let through. */
    private static final class StandardErrorCopy implements AutoCloseable {
        private final java.io.PrintStream original = System.err;
        private final java.io.ByteArrayOutputStream copy = new java.io.ByteArrayOutputStream();

        StandardErrorCopy() {
            System.setErr(new java.io.PrintStream(new java.io.OutputStream() {
                @Override
                public void write(int b) {
                    synchronized (copy) {
                        copy.write(b);
                    }
                    original.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    synchronized (copy) {
                        copy.write(b, off, len);
                    }
                    original.write(b, off, len);
                }
            }, true, java.nio.charset.StandardCharsets.UTF_8));
        }

        String text() {
            synchronized (copy) {
                return copy.toString(java.nio.charset.StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() {
            System.setErr(original);
        }
    }

    // ---------------------------------------------------------------- unknown enum values

    /**
     * A newer worker declares a handler with a visibility this version does not know (number 7):
     * neither the ingress nor another service may call it, while the handler it declares public is
     * served as usual.
     */
    @Test
    void aHandlerOfUnknownVisibilityIsCallableByNoOne() throws Exception {
        ScriptedWorker newer = closing(ScriptedWorker.answering(answer()
                .addServices(dev.rollcall.protocol.v1.ServiceInfo.newBuilder().setName("orders")
                        .addHandlers(dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName("purge")
                                .setVisibilityValue(7))
                        .addHandlers(dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName("place")))
                .build()));
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).build());
        discovery.push(List.of(newer.endpoint()));
        FleetSnapshot s = r.awaitWorkers(1, WAIT);

        for (dev.rollcall.api.registry.Caller caller : dev.rollcall.api.registry.Caller.values()) {
            assertThatThrownBy(() -> s.target("orders", "purge", caller))
                    .isInstanceOf(dev.rollcall.api.registry.TargetLookupException.class)
                    .hasMessageContaining("a visibility this version of Rollcall does not know");
            assertThat(s.target("orders", "place", caller).endpoints()).containsExactly(newer.endpoint());
        }
    }

    /** A serving state this version does not know (number 9) keeps the worker out of use: not serving. */
    @Test
    void aWorkerInAnUnknownServingStateIsNotServed() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0"));
        ScriptedWorker newer = closing(ScriptedWorker.answering(answer().setStateValue(9).build()));
        WorkerResolver r = closing(WorkerResolver.builder().discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).build());
        discovery.push(List.of(fleet.worker(0).endpoint(), newer.endpoint()));

        FleetSnapshot s = r.await(snap -> snap.status(newer.endpoint().url())
                .map(st -> st.state() == State.NOT_SERVING).orElse(false), WAIT);
        assertThat(r.awaitWorkers(1, WAIT).compatibleEndpoints()).containsExactly(fleet.worker(0).endpoint());
        assertThat(s.workers()).extracting(w -> w.endpoint().url()).doesNotContain(newer.endpoint().url());
    }

    // ---------------------------------------------------------------- how many candidates

    /**
     * A backend lists 1,000,000 candidates: the set is refused whole (the limit is 100,000), nothing
     * of it is tracked or probed, the resolver keeps serving the good set and says why discovery is
     * failing; the next good set is taken again.
     */
    @Test
    void aMillionCandidatesAreRefusedAndTheGoodSetKeptServing() throws Exception {
        WorkerFleet fleet = closing(WorkerFleet.start("1.0.0", "1.0.0"));
        WorkerResolver r = closing(WorkerResolver.builder().name("million").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).build());
        List<dev.rollcall.api.WorkerEndpoint> good = List.of(fleet.worker(0).endpoint(), fleet.worker(1).endpoint());
        discovery.push(good);
        r.awaitWorkers(2, WAIT);
        long probes = r.probesSent();

        List<dev.rollcall.api.WorkerEndpoint> million = new java.util.ArrayList<>(1_000_000);
        for (int i = 0; i < 1_000_000; i++) {
            million.add(dev.rollcall.api.WorkerEndpoint.of("h" + (i / 50_000), 1 + i % 50_000));
        }
        discovery.push(million);
        million = null;

        FleetSnapshot s = r.await(snap -> snap.discoveryProblem().isPresent(), WAIT);
        assertThat(s.discoveryProblem().get()).contains("discovery listed 1000000 candidates, more than"
                + " rollcall.discovery.max-candidates (100000): the set is refused whole and the last good set kept");
        assertThat(s.staleSince()).isPresent();
        assertThat(s.counts().candidates()).isEqualTo(2);
        assertThat(r.workers()).extracting(w -> w.endpoint()).containsExactlyInAnyOrderElementsOf(good);
        assertThat(r.probesSent()).as("probes sent after the refused set").isLessThan(probes + 10);

        discovery.push(good);
        FleetSnapshot recovered = r.await(snap -> snap.discoveryProblem().isEmpty(), WAIT);
        assertThat(recovered.staleSince()).isEmpty();
        assertThat(recovered.compatibleEndpoints()).containsExactlyInAnyOrderElementsOf(good);
    }

    // ---------------------------------------------------------------- configuration of a resolver

    /** Values of the wrong type or unit: start-up fails naming the key, the value, what was expected and the source. */
    @ParameterizedTest(name = "[{index}] {0}=''{1}''")
    @CsvSource(delimiter = '|', textBlock = """
            rollcall.probe.timeout            | 2 seconds | a duration with a unit
            rollcall.probe.timeout            | -1s       | a duration with a unit
            rollcall.probe.timeout            | 0s        | a duration greater than 0s
            rollcall.probe.concurrency        | many      | a whole number from 1 to 100000
            rollcall.probe.concurrency        | 1.5       | a whole number from 1 to 100000
            rollcall.probe.keep-channels      | yes       | true or false
            rollcall.probe.max-kept-channels  | many      | a whole number from 0 to 10000000
            rollcall.probe.max-kept-channels  | 0         | while rollcall.probe.keep-channels is true
            rollcall.probe.max-response-bytes | 1MB       | a whole number from 1024 to 67108864
            rollcall.probe.backoff.initial    | 250       | a duration with a unit
            """)
    void configurationValueOfTheWrongTypeOrUnitFailsNamingKeyValueExpectationAndSource(String key, String value,
                                                                                   String expected) {
        Map<String, String> config = new HashMap<>(Map.of("rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001", "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0"));
        config.put(key, value);

        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(config)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(key + "='" + value + "'")
                .hasMessageContaining(expected)
                .hasMessageContaining("(from programmatic)")
                .satisfies(e -> assertThat(((ConfigurationException) e).key()).isEqualTo(key));
    }

    @Test
    void unknownKeyAmongOtherwiseGoodConfigurationNamesTheNearestKnownKey() {
        Map<String, String> config = Map.of("rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001", "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0", "rollcall.probe.concurency", "8");

        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(config)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.probe.concurency")
                .hasMessageContaining("did you mean rollcall.probe.concurrency?");
    }

    /** A real worker on the IPv6 loopback address, configured in brackets, is probed and served. */
    @Test
    void bracketedIpv6EndpointIsServedAndUnbracketedOneIsRejectedSuggestingBrackets() throws Exception {
        RollcallWorker worker = closing(RollcallWorker.builder().host("::1").version("1.2.0").start());
        String url = "grpc://[::1]:" + worker.port();
        WorkerResolver r = closing(WorkerResolver.fromConfig(RollcallConfig.of(Map.of("rollcall.discovery.type",
                "static", "rollcall.discovery.static.endpoints", url, "rollcall.policy.type", "semver",
                "rollcall.policy.semver.range", "^1.0"))));

        assertThat(r.awaitWorkers(1, WAIT).workers()).singleElement().satisfies(served -> {
            assertThat(served.endpoint().url()).isEqualTo(url);
            assertThat(served.instanceId()).isEqualTo(worker.instanceId());
        });

        Map<String, String> config = Map.of("rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:7001, grpc://::1:7001",
                "rollcall.policy.type", "semver", "rollcall.policy.semver.range", "^1.0");
        assertThatThrownBy(() -> WorkerResolver.fromConfig(RollcallConfig.of(config)).close())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("rollcall.discovery.static.endpoints")
                .hasMessageContaining("'grpc://::1:7001'")
                .hasMessageContaining("IPv6 addresses go in brackets: grpc://[::1]:7001");
    }
}
