package dev.rollcall.discovery.k8s;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.discovery.CandidateListener;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every set and error it receives, in order; safe to call from the backend's threads. */
final class RecordingListener implements CandidateListener {

    private final List<Set<WorkerEndpoint>> sets = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onCandidates(Set<WorkerEndpoint> latest) {
        sets.add(Set.copyOf(latest));
    }

    @Override
    public void onError(Throwable cause) {
        errors.add(cause);
    }

    List<Set<WorkerEndpoint>> sets() {
        return List.copyOf(sets);
    }

    List<Throwable> errors() {
        return List.copyOf(errors);
    }

    /** The last set received, or null when none came yet. */
    Set<WorkerEndpoint> latest() {
        List<Set<WorkerEndpoint>> snapshot = sets();
        return snapshot.isEmpty() ? null : snapshot.get(snapshot.size() - 1);
    }
}
