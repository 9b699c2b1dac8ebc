package dev.rollcall.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.testkit.faults.FaultProxies;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every discovery backend promises ({@link WorkerDiscovery}, {@link CandidateListener}),
 * written once. A backend's test class extends this one, keeps a fresh source per test (a file, an
 * etcd, a Consul stand-in, a Kubernetes API mock...) and fills in the hooks; it inherits the tests:
 *
 * <ul>
 *   <li>the first set is delivered whole, and an empty source as an empty set;</li>
 *   <li>every change delivers the new full set, never a delta: an addition with the others, a
 *       removal as the set without it;</li>
 *   <li>a malformed entry is skipped, the rest delivered, no {@code onError}; with slf4j-simple as
 *       the test's SLF4J binding, the log names where the entry came from;</li>
 *   <li>a malformed entry whose text holds a line break, a forged log line and a terminal escape
 *       ({@link #HOSTILE_TEXT}, opt in with {@link #writeHostileEntry}) is logged escaped: no
 *       forged line, no escape character reaches the log;</li>
 *   <li>a source that cannot be reached is reported with {@code onError}, never as an empty set,
 *       at start and after a first set; once it is back the set is delivered again unasked;</li>
 *   <li>a backend that asks a server (opt in with {@link #silentServer}): a server that goes
 *       silent with its sockets open is reported within the bound the backend documents, and once
 *       it speaks again the current set is delivered, a change made meanwhile included;</li>
 *   <li>{@code close()} ends every thread the backend started, no callback follows it, and it is
 *       idempotent, also on a backend that never started;</li>
 *   <li>the provider is found by {@link ServiceLoader} under its {@link #type()}.</li>
 * </ul>
 *
 * <p><b>Fixtures.</b> Set up the source in your own {@code @BeforeEach} (it runs before each
 * inherited test) and tear it down in your {@code @AfterEach}. The backends the contract creates
 * are closed after your {@code @AfterEach} methods. Keep the backend's retry and backoff short in
 * {@link #settings()} (a few hundred milliseconds), since the outage tests wait for a recovery.
 *
 * <p><b>Threads.</b> Every hook is called on the test's own thread, never concurrently, and may
 * block until its change is made in the source (not until the backend has seen it). The backend
 * under test calls its listener from its own threads; the contract records and awaits.
 *
 * <p><b>Candidates.</b> The endpoints the contract writes are plaintext, without labels, on
 * distinct loopback addresses and ports ({@code grpc://127.0.0.11:7011}, ...). A backend may add
 * labels of its own: sets are compared by {@link WorkerEndpoint#url()}, the endpoint's identity.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)   // a backend that hangs fails its test instead of the build
public abstract class WorkerDiscoveryContract {

    private static final WorkerEndpoint A = WorkerEndpoint.of("127.0.0.11", 7011);
    private static final WorkerEndpoint B = WorkerEndpoint.of("127.0.0.12", 7012);
    private static final WorkerEndpoint C = WorkerEndpoint.of("127.0.0.13", 7013);

    /**
     * How much later than its bound a backend may report a silent server: a loaded machine's
     * scheduling, not the backend's own timing, which its bound covers.
     */
    private static final Duration SILENCE_SLACK = Duration.ofSeconds(5);

    /**
     * What {@link #writeHostileEntry} hides in an entry: a line break, a line in slf4j-simple's
     * format, and a terminal escape that would clear the screen.
     */
    protected static final String HOSTILE_TEXT = "\n[main] INFO FORGED line \u001b[2J";

    @AutoClose
    private final Closer started = new Closer();

    // ---- hooks -----------------------------------------------------------------------------

    /** The provider's {@link WorkerDiscoveryProvider#type()}, e.g. {@code etcd}. */
    protected abstract String type();

    /**
     * The backend's settings pointing at this test's source, keys relative to
     * {@code rollcall.discovery.<type>.} (e.g. {@code endpoints}, {@code prefix}), as a user would
     * write them. Called for each backend the contract creates.
     */
    protected abstract Map<String, String> settings();

    /**
     * Creates a backend, not started, over this test's source: {@link #newDiscovery(Map)} of
     * {@link #settings()}. May be called more than once per test (a second backend watches the same
     * source).
     */
    protected WorkerDiscovery newDiscovery() {
        return newDiscovery(settings());
    }

    /**
     * Creates a backend, not started, from {@code settings} (keys as in {@link #settings()}). The
     * default finds the provider of {@link #type()} by {@link ServiceLoader} and creates it, exactly
     * as the resolver does; override it only to inject what no setting reaches (e.g. shorter
     * internal timings).
     */
    protected WorkerDiscovery newDiscovery(Map<String, String> settings) {
        return createThroughServiceLoader(settings);
    }

    /**
     * For a backend that asks a server: its settings with the server reached through
     * {@code proxies} instead, and the bound within which the backend, so configured, promises to
     * report a server gone silent. The default, empty, says the backend asks no server (a file):
     * the silent-server test is then skipped. Make each proxy you need from {@code proxies} (one
     * per server address, {@link FaultProxies#tcpAndUdp} for one that is asked over both), e.g.
     *
     * <pre>{@code
     * protected Optional<SilentServer> silentServer(FaultProxies proxies) {
     *     String via = "http://" + proxies.tcp(server.port()).hostAndPort();
     *     return Optional.of(new SilentServer(Map.of("endpoints", via, "keepalive-time", "300ms",
     *             "request-timeout", "500ms"), Duration.ofMillis(800)));   // what the README promises
     * }
     * }</pre>
     * The contract blackholes every proxy, expects {@code onError} within the bound (give a
     * backend that polls a short interval here), writes a change to the source directly, heals
     * the proxies and expects the changed set.
     */
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        return Optional.empty();
    }

    /**
     * What {@link #silentServer} returns.
     *
     * @param settings       the backend's settings (keys as in {@link #settings()}) pointing
     *                       through the proxies
     * @param reportedWithin the longest a server may be silent, with these settings, before the
     *                       backend calls {@code onError}: the bound its documentation gives
     */
    public record SilentServer(Map<String, String> settings, Duration reportedWithin) {
        public SilentServer {
            settings = Map.copyOf(settings);
            if (reportedWithin.isNegative() || reportedWithin.isZero()) {
                throw new IllegalArgumentException("reportedWithin " + reportedWithin + " is not positive");
            }
        }
    }

    /**
     * Makes the source list exactly {@code candidates} (an empty set: none), replacing what it
     * listed before except the entry {@link #writeMalformedEntry()} added, which stays. Never called
     * while the source is unreachable.
     */
    protected abstract void writeCandidates(Set<WorkerEndpoint> candidates) throws Exception;

    /**
     * Adds one malformed entry to the source next to its candidates (a line that is no endpoint, a
     * value that is not JSON, an instance without a port...), which later
     * {@link #writeCandidates} calls keep. Returns text that the backend's WARN about it must
     * contain to say where the entry is: a file and line, a key, a service ID, an object's name.
     */
    protected abstract String writeMalformedEntry() throws Exception;

    /**
     * Adds one malformed entry to the source whose text holds {@code hostile} where the backend
     * will repeat it when it logs the entry: in its name (a key, a service ID, an object's name)
     * or in its value (a line, a payload). Returns the text the backend's WARN about it must
     * contain, as the backend writes it (escaped: {@code PeerText.escape} turns a line break into
     * {@code \n}). The default, empty, skips the test: the fixture cannot write such an entry.
     */
    protected Optional<String> writeHostileEntry(String hostile) throws Exception {
        return Optional.empty();
    }

    /**
     * Makes the source unreachable, keeping what it lists: stop the server (on the same port, to be
     * restarted), or remove the file. The backend may be started or not yet. Returns text that the
     * message of the backend's {@code onError} cause must contain to say what it cannot reach: the
     * server's address, the file's path.
     */
    protected abstract String makeSourceUnreachable() throws Exception;

    /** Undoes {@link #makeSourceUnreachable()}: the source serves again what it listed before. */
    protected abstract void makeSourceReachable() throws Exception;

    /**
     * The name prefixes of every thread the backend starts (e.g. {@code rollcall-etcd-}). While the
     * backend runs they must name at least one thread it started; after {@code close()} every
     * thread so named that was not alive before the backend was created must end ({@link ThreadCensus}).
     * Leave out names the fixture's own client threads share (a library's pool names).
     */
    protected abstract List<String> threadNamePrefixes();

    /** How long to wait for the backend to notice a change or an outage: 20 s unless overridden. */
    protected Duration patience() {
        return Duration.ofSeconds(20);
    }

    // ---- the contract ----------------------------------------------------------------------

    @Test
    void providerIsFoundByServiceLoaderUnderItsType() {
        assertThat(loadedProviders().filter(p -> p.type().equals(type())))
                .as("providers of type '%s' in META-INF/services/%s", type(), WorkerDiscoveryProvider.class.getName())
                .hasSize(1);
        // The one found is this backend's: it accepts the backend's settings (even where newDiscovery() is overridden).
        assertThatCode(() -> createThroughServiceLoader().close()).doesNotThrowAnyException();
    }

    @Test
    void deliversTheFirstSetWhole() throws Exception {
        writeCandidates(Set.of(A, B, C));

        WorkerDiscovery discovery = newDiscovery();
        CandidateRecorder recorder = start(discovery);

        await().atMost(patience()).until(() -> !recorder.sets().isEmpty());
        assertThat(urls(recorder.sets().get(0))).as("the first set").isEqualTo(urls(A, B, C));
        assertThat(recorder.errors()).isEmpty();
        assertThat(discovery.description()).isNotBlank();
    }

    @Test
    void deliversAnEmptySourceAsAnEmptySet() throws Exception {
        writeCandidates(Set.of());

        CandidateRecorder recorder = start(newDiscovery());

        await().atMost(patience()).until(() -> !recorder.sets().isEmpty());
        assertThat(recorder.sets().get(0)).as("an empty source means no candidates").isEmpty();
        assertThat(recorder.errors()).isEmpty();
    }

    @Test
    void deliversAnAddedCandidateWithTheOthers() throws Exception {
        writeCandidates(Set.of(A, B));
        CandidateRecorder recorder = start(newDiscovery());
        awaitLatest(recorder, A, B);

        writeCandidates(Set.of(A, B, C));

        awaitLatest(recorder, A, B, C);
        assertThat(recorder.sets()).as("every set is the full set, never a delta")
                .allSatisfy(set -> assertThat(urls(set)).contains(A.url(), B.url()));
        assertThat(recorder.errors()).isEmpty();
    }

    @Test
    void deliversTheSetWithoutARemovedCandidate() throws Exception {
        writeCandidates(Set.of(A, B, C));
        CandidateRecorder recorder = start(newDiscovery());
        awaitLatest(recorder, A, B, C);

        writeCandidates(Set.of(A, C));
        awaitLatest(recorder, A, C);
        assertThat(recorder.sets()).as("every set is the full set, never a delta")
                .allSatisfy(set -> assertThat(urls(set)).contains(A.url(), C.url()));

        writeCandidates(Set.of());
        awaitLatest(recorder);
        assertThat(recorder.errors()).isEmpty();
    }

    @Test
    void skipsAMalformedEntryAndDeliversTheRest() throws Exception {
        writeCandidates(Set.of(A));
        CandidateRecorder recorder = new CandidateRecorder();
        String where;
        String log;
        try (ConsoleCapture console = new ConsoleCapture()) {
            where = writeMalformedEntry();
            start(newDiscovery(), recorder);
            awaitLatest(recorder, A);

            // A change next to the malformed entry is delivered too.
            writeCandidates(Set.of(A, B));
            awaitLatest(recorder, A, B);
            log = console.text();
        }

        assertThat(recorder.errors()).as("a malformed entry is not an outage").isEmpty();
        if (ConsoleCapture.seesLogs()) {
            assertThat(log).as("the log names where the malformed entry is").contains(where);
        }
    }

    @Test
    void logsAHostileEntryEscapedSoThatItForgesNoLine() throws Exception {
        writeCandidates(Set.of(A));
        CandidateRecorder recorder = new CandidateRecorder();
        String log;
        Optional<String> where;
        try (ConsoleCapture console = new ConsoleCapture()) {
            where = writeHostileEntry(HOSTILE_TEXT);
            assumeTrue(where.isPresent(), "this fixture writes no hostile entry");
            assumeTrue(ConsoleCapture.seesLogs(), "the log is read from slf4j-simple's console output");
            start(newDiscovery(), recorder);
            awaitLatest(recorder, A);
            writeCandidates(Set.of(A, B));  // read again next to the hostile entry
            awaitLatest(recorder, A, B);
            log = console.text();
        }

        assertThat(recorder.errors()).as("a hostile entry is not an outage").isEmpty();
        assertThat(log).as("the WARN names the entry, escaped").contains(where.get());
        assertThat(log).as("no terminal escape reaches the log").doesNotContain("\u001b");
        assertThat(log.lines()).as("no line of the log was forged by the entry")
                .noneMatch(line -> line.startsWith("[main] INFO FORGED"));
    }

    @Test
    void reportsASourceUnreachableAtStartAndNeverAnEmptySet() throws Exception {
        writeCandidates(Set.of(A, B));
        String what = makeSourceUnreachable();

        CandidateRecorder recorder = start(newDiscovery());

        await().atMost(patience()).until(() -> !recorder.errors().isEmpty());
        assertThat(recorder.sets()).as("an unreachable source does not mean there are no candidates").isEmpty();
        assertThat(recorder.errors().get(0)).as("the error says what cannot be reached").hasMessageContaining(what);

        makeSourceReachable();
        awaitLatest(recorder, A, B);
        assertThat(recorder.sets()).as("sets delivered").noneMatch(Set::isEmpty);
    }

    @Test
    void reportsASourceLostAfterTheFirstSetAndDeliversTheSetAgainOnceBack() throws Exception {
        writeCandidates(Set.of(A, B));
        CandidateRecorder recorder = start(newDiscovery());
        awaitLatest(recorder, A, B);

        String what = makeSourceUnreachable();
        await().atMost(patience()).until(recorder::stale);
        assertThat(recorder.errors()).last().satisfies(e -> assertThat(e).hasMessageContaining(what));
        assertThat(recorder.sets()).as("sets while the source is away: only the last good one, never an empty one")
                .allSatisfy(set -> assertThat(urls(set)).isEqualTo(urls(A, B)));

        // The resolver marks its set stale on onError; only a set delivered again clears that.
        makeSourceReachable();
        await().atMost(patience()).until(() -> !recorder.stale());
        assertThat(recorder.latestUrls()).isEqualTo(urls(A, B));
    }

    /**
     * The server is cut off with its sockets open (no FIN, no RST): the backend must notice it by
     * itself within its documented bound, keep the last set, and once the server speaks again
     * deliver the set as it is then, a change written while it was silent included.
     */
    @Test
    void reportsASilentServerWithinItsBoundAndDeliversTheChangeMadeMeanwhileOnceItSpeaks() throws Exception {
        try (FaultProxies proxies = new FaultProxies()) {
            Optional<SilentServer> setup = silentServer(proxies);
            assumeTrue(setup.isPresent(), type() + " asks no server: there is none to go silent");
            Duration bound = setup.get().reportedWithin();
            writeCandidates(Set.of(A, B));
            CandidateRecorder recorder = start(newDiscovery(setup.get().settings()));
            awaitLatest(recorder, A, B);
            assertThat(recorder.errors()).as("errors before the silence").isEmpty();

            proxies.blackhole();
            writeCandidates(Set.of(A, C));      // at once: a push on its way is held with the rest

            await().atMost(bound.plus(SILENCE_SLACK)).until(recorder::stale);
            List<Integer> ports = proxies.ports();
            assertThat(recorder.errors()).first().satisfies(e -> assertThat(e.getMessage())
                    .as("the error names the server it cannot hear (through ports %s)", ports)
                    .containsAnyOf(ports.stream().map(String::valueOf).toArray(String[]::new)));
            assertThat(recorder.sets()).as("sets until the server speaks again: only the last good one")
                    .allSatisfy(set -> assertThat(urls(set)).isEqualTo(urls(A, B)));

            proxies.pass();
            await().atMost(patience()).untilAsserted(() -> {
                assertThat(recorder.stale()).as("still stale").isFalse();
                assertThat(recorder.latestUrls()).as("the set written while the server was silent")
                        .isEqualTo(urls(A, C));
            });
        }
    }

    @Test
    void closeEndsEveryThreadTheBackendStarted() throws Exception {
        ThreadCensus before = ThreadCensus.take();
        String[] prefixes = threadNamePrefixes().toArray(String[]::new);
        writeCandidates(Set.of(A));
        WorkerDiscovery discovery = newDiscovery();
        CandidateRecorder recorder = start(discovery);
        awaitLatest(recorder, A);
        assertThat(before.newThreads(prefixes)).as("threads named %s while the backend runs", threadNamePrefixes())
                .isNotEmpty();

        discovery.close();

        before.awaitNewThreadsEnded(patience(), prefixes);
        assertThatCode(discovery::close).as("a second close").doesNotThrowAnyException();
    }

    @Test
    void noCallbackFollowsClose() throws Exception {
        writeCandidates(Set.of(A));
        WorkerDiscovery discovery = newDiscovery();
        CandidateRecorder recorder = start(discovery);
        awaitLatest(recorder, A);

        discovery.close();
        int calls = recorder.events().size();
        writeCandidates(Set.of(A, B));
        // A second backend on the same source sees the change and then the outage: by then the
        // closed one had every chance to report them too.
        CandidateRecorder witness = start(newDiscovery());
        awaitLatest(witness, A, B);
        makeSourceUnreachable();
        await().atMost(patience()).until(() -> !witness.errors().isEmpty());

        assertThat(recorder.events()).as("calls after close").hasSize(calls);
    }

    @Test
    void closingABackendThatNeverStartedIsQuiet() {
        WorkerDiscovery discovery = newDiscovery();

        assertThatCode(discovery::close).doesNotThrowAnyException();
        assertThatCode(discovery::close).as("a second close").doesNotThrowAnyException();
    }

    // ---- helpers ---------------------------------------------------------------------------

    private WorkerDiscovery createThroughServiceLoader() {
        return createThroughServiceLoader(settings());
    }

    private WorkerDiscovery createThroughServiceLoader(Map<String, String> settings) {
        String scope = "rollcall.discovery." + type() + ".";
        Map<String, String> full = new HashMap<>();
        settings.forEach((k, v) -> full.put(scope + k, v));
        return provider().create(Settings.of(full).scope(scope));
    }

    private WorkerDiscoveryProvider provider() {
        List<WorkerDiscoveryProvider> found = loadedProviders().filter(p -> p.type().equals(type())).toList();
        assertThat(found).as("providers of type '%s' found by ServiceLoader", type()).hasSize(1);
        return found.get(0);
    }

    private static Stream<WorkerDiscoveryProvider> loadedProviders() {
        return ServiceLoader.load(WorkerDiscoveryProvider.class).stream().map(ServiceLoader.Provider::get);
    }

    private CandidateRecorder start(WorkerDiscovery discovery) {
        return start(discovery, new CandidateRecorder());
    }

    private CandidateRecorder start(WorkerDiscovery discovery, CandidateRecorder recorder) {
        started.add(discovery);
        discovery.start(recorder);
        return recorder;
    }

    private void awaitLatest(CandidateRecorder recorder, WorkerEndpoint... expected) {
        Set<String> urls = urls(expected);
        await().atMost(patience()).untilAsserted(() -> assertThat(recorder.latestUrls()).isEqualTo(urls));
    }

    private static Set<String> urls(WorkerEndpoint... endpoints) {
        return urls(Set.of(endpoints));
    }

    private static Set<String> urls(Set<WorkerEndpoint> endpoints) {
        return endpoints.stream().map(WorkerEndpoint::url).collect(Collectors.toCollection(TreeSet::new));
    }
}
