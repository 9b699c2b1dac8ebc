package dev.rollcall.core.internal.snapshot;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.WorkerStatus;
import java.util.List;
import java.util.Map;

/** A worker as the snapshot code sees it, set by the test: pending until {@link #answer}. */
final class TestWorker implements ShownWorker {

    private final WorkerEndpoint endpoint;
    private final ShownState shown = new ShownState(this);
    private WorkerInfo info;
    private ServingState serving = ServingState.SERVING;

    TestWorker(WorkerEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** It answered with {@code version} as instance {@code instance}, saying {@code serving}. */
    TestWorker answer(String version, String instance, ServingState serving) {
        this.info = new WorkerInfo(endpoint, version, instance, Map.of(), List.of());
        this.serving = serving;
        shown.noteChange();
        return this;
    }

    /** As {@link #answer}, without noting the change: the bug the builds' check is there to find. */
    TestWorker answerWithoutNoting(String version, String instance, ServingState serving) {
        this.info = new WorkerInfo(endpoint, version, instance, Map.of(), List.of());
        this.serving = serving;
        return this;
    }

    @Override
    public String url() {
        return endpoint.url();
    }

    @Override
    public WorkerEndpoint endpoint() {
        return endpoint;
    }

    @Override
    public WorkerInfo info() {
        return info;
    }

    @Override
    public boolean answered() {
        return info != null;
    }

    @Override
    public boolean inUse() {
        return info != null && serving == ServingState.SERVING;
    }

    @Override
    public ServingState serving() {
        return serving;
    }

    @Override
    public String reason() {
        return info != null ? "" : "not probed yet";
    }

    @Override
    public WorkerStatus.State shownBeforePolicy() {
        return info != null ? WorkerStatus.State.COMPATIBLE : WorkerStatus.State.PENDING;
    }

    @Override
    public ShownState shownState() {
        return shown;
    }

    @Override
    public String toString() {
        return url();
    }
}
