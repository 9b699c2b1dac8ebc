package dev.rollcall.discovery.consul;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** Keeps every set and error it receives, in order; safe to call from the backend's threads. */
final class RecordingListener implements CandidateListener {

    /** A set, or an error: what the resolver would have been told, in order. */
    record Event(Set<WorkerEndpoint> set, Throwable error) {
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

    List<Set<WorkerEndpoint>> sets() {
        return events.stream().filter(e -> e.set() != null).map(Event::set).toList();
    }

    List<Throwable> errors() {
        return events.stream().filter(e -> e.error() != null).map(Event::error).toList();
    }

    /** The last set received, or null when none came yet. */
    Set<WorkerEndpoint> latest() {
        List<Set<WorkerEndpoint>> sets = sets();
        return sets.isEmpty() ? null : sets.get(sets.size() - 1);
    }

    /** The URLs of the last set received, sorted; null when none came yet. */
    Set<String> latestUrls() {
        Set<WorkerEndpoint> latest = latest();
        return latest == null ? null
                : latest.stream().map(WorkerEndpoint::url).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Whether the last thing received was an error (the resolver's set would be marked stale). */
    boolean stale() {
        List<Event> all = List.copyOf(events);
        return !all.isEmpty() && all.get(all.size() - 1).error() != null;
    }
}
