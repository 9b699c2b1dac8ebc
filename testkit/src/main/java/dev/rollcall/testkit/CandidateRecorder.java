package dev.rollcall.testkit;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * A {@link CandidateListener} that keeps every set and error a discovery backend gives it, in
 * order: for testing a backend (Rollcall's or your own) without a resolver. Thread-safe: the
 * backend may call it from its own threads while the test reads it.
 *
 * <pre>{@code
 * CandidateRecorder recorder = new CandidateRecorder();
 * discovery.start(recorder);
 * await().until(() -> recorder.latestUrls() != null && recorder.latestUrls().contains("grpc://127.0.0.1:7001"));
 * }</pre>
 */
public final class CandidateRecorder implements CandidateListener {

    /** A set, or an error: what the resolver would have been told, in order. */
    public record Event(Set<WorkerEndpoint> set, Throwable error) {
    }

    private final List<Event> events = new CopyOnWriteArrayList<>();

    @Override
    public void onCandidates(Set<WorkerEndpoint> latest) {
        events.add(new Event(Set.copyOf(latest), null));
    }

    @Override
    public void onError(Throwable cause) {
        events.add(new Event(null, cause));
    }

    /** Everything received, in order. */
    public List<Event> events() {
        return List.copyOf(events);
    }

    /** Every set received, in order. */
    public List<Set<WorkerEndpoint>> sets() {
        return events.stream().filter(e -> e.set() != null).map(Event::set).toList();
    }

    /** Every error received, in order. */
    public List<Throwable> errors() {
        return events.stream().filter(e -> e.error() != null).map(Event::error).toList();
    }

    /** The last set received, or null when none came yet. */
    public Set<WorkerEndpoint> latest() {
        List<Set<WorkerEndpoint>> sets = sets();
        return sets.isEmpty() ? null : sets.get(sets.size() - 1);
    }

    /** The URLs of the last set received, sorted; null when none came yet. */
    public Set<String> latestUrls() {
        Set<WorkerEndpoint> latest = latest();
        return latest == null ? null
                : latest.stream().map(WorkerEndpoint::url).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Whether the last thing received was an error (a resolver's snapshot would be marked stale). */
    public boolean stale() {
        List<Event> all = List.copyOf(events);
        return !all.isEmpty() && all.get(all.size() - 1).error() != null;
    }
}
