package dev.rollcall.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The threads alive at one moment, for tests that check "every thread it started has ended":
 * take a census before starting something, close it, then {@link #awaitNewThreadsEnded} with the
 * name prefixes its threads carry. Threads that were alive before the census (left by earlier
 * tests, or shared pools) are not counted against the code under test.
 *
 * <pre>{@code
 * ThreadCensus before = ThreadCensus.take();
 * WorkerDiscovery discovery = ...; discovery.start(recorder);
 * discovery.close();
 * before.awaitNewThreadsEnded(Duration.ofSeconds(10), "rollcall-etcd-");
 * }</pre>
 *
 * <p>A census is immutable; every method may be called from any thread. Name prefixes are compared
 * with {@link String#startsWith}; no prefix at all means every thread.
 */
public final class ThreadCensus {

    private final Set<Thread> threads;

    private ThreadCensus(Set<Thread> threads) {
        this.threads = threads;
    }

    /** The threads alive now. */
    public static ThreadCensus take() {
        return new ThreadCensus(Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .collect(Collectors.toUnmodifiableSet()));
    }

    /** The threads of this census whose name starts with one of {@code prefixes}, sorted by name. */
    public List<Thread> threads(String... prefixes) {
        return threads.stream().filter(t -> named(t.getName(), prefixes))
                .sorted(Comparator.comparing(Thread::getName)).toList();
    }

    /** The names of {@link #threads(String...)}, sorted. */
    public List<String> names(String... prefixes) {
        return threads(prefixes).stream().map(Thread::getName).toList();
    }

    /**
     * How many threads of each {@linkplain #kindOf kind} this census holds, among those whose name
     * starts with one of {@code prefixes}; sorted by kind.
     */
    public Map<String, Integer> byKind(String... prefixes) {
        Map<String, Integer> kinds = new TreeMap<>();
        threads(prefixes).forEach(t -> kinds.merge(kindOf(t.getName()), 1, Integer::sum));
        return kinds;
    }

    /**
     * A thread's name without its numbers: {@code rollcall-probe-soak-3} and
     * {@code grpc-nio-worker-ELG-1-2} become {@code rollcall-probe-soak} and {@code grpc-nio-worker-ELG}.
     */
    public static String kindOf(String threadName) {
        return threadName.replaceAll("[-#]?\\d+", "").replaceAll("-+$", "");
    }

    /**
     * The names of the threads alive now that were not alive at this census and whose name starts
     * with one of {@code prefixes}, sorted.
     */
    public List<String> newThreads(String... prefixes) {
        return take().threads(prefixes).stream().filter(t -> !threads.contains(t)).map(Thread::getName).toList();
    }

    /**
     * Waits up to {@code within} until every thread started since this census whose name starts
     * with one of {@code prefixes} has ended; fails naming those still alive and where each is.
     */
    public void awaitNewThreadsEnded(Duration within, String... prefixes) {
        await().atMost(within).untilAsserted(() -> assertThat(newThreads(prefixes))
                .as("threads started since the census and still alive:%n%s", describeNew(prefixes))
                .isEmpty());
    }

    /**
     * Waits up to {@code within} until no thread whose name starts with one of {@code prefixes} is
     * alive, whenever it started; fails naming those still alive and where each is.
     */
    public static void awaitNoneAlive(Duration within, String... prefixes) {
        await().atMost(within).untilAsserted(() -> assertThat(take().names(prefixes))
                .as("threads still alive:%n%s", describe(take().threads(prefixes)))
                .isEmpty());
    }

    private String describeNew(String... prefixes) {
        return describe(take().threads(prefixes).stream().filter(t -> !threads.contains(t)).toList());
    }

    private static String describe(List<Thread> alive) {
        return alive.stream().map(t -> "  " + t.getName() + " (" + t.getState() + ")"
                        + Arrays.stream(t.getStackTrace()).limit(8).map(f -> "\n      at " + f)
                        .collect(Collectors.joining()))
                .collect(Collectors.joining("\n"));
    }

    private static boolean named(String name, String... prefixes) {
        return prefixes.length == 0 || Arrays.stream(prefixes).anyMatch(name::startsWith);
    }
}
