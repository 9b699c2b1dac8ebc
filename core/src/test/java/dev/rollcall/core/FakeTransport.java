package dev.rollcall.core;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Links whose probes the test answers by hand, and whose connections it drops. Single-threaded. */
final class FakeTransport implements ProbeTransport {

    /**
     * One probe sent, waiting for the test to answer it; a probe that opened the worker's stream
     * ({@code onPush} set) leaves the stream open once answered.
     */
    record Probe(FakeLink link, CompletableFuture<ProbeOutcome> result,
                 java.util.function.Consumer<ProbeOutcome> onPush, java.util.function.Consumer<Status> onEnd) {

        Probe(FakeLink link, CompletableFuture<ProbeOutcome> result) {
            this(link, result, null, null);
        }

        void answer(String version, String instanceId) {
            answer(version, instanceId, java.util.Map.of());
        }

        void answer(String version, String instanceId, java.util.Map<String, String> labels) {
            answer(version, instanceId, labels, dev.rollcall.api.ServingState.SERVING);
        }

        void answer(String version, String instanceId, java.util.Map<String, String> labels,
                    dev.rollcall.api.ServingState state) {
            WorkerEndpoint e = link.endpoint;
            link.ready = true;
            link.lastAnswer = new ProbeOutcome.Answered(new WorkerInfo(e, version, instanceId, labels, List.of()), state);
            if (onPush != null && !result.isDone()) { // the stream stays open, as a worker keeps it
                link.onPush = onPush;
                link.onEnd = onEnd;
            }
            result.complete(link.lastAnswer);
        }

        void fail() {
            result.complete(new ProbeOutcome.Failed(Status.Code.UNAVAILABLE, "UNAVAILABLE: refused"));
        }
    }

    final class FakeLink implements Link {
        final WorkerEndpoint endpoint;
        boolean ready;
        boolean closed;
        Runnable onNotReady;
        java.util.function.Consumer<ProbeOutcome> onPush;
        java.util.function.Consumer<Status> onEnd;
        int watches;
        /** Completed by the test when {@link #slowClose}: the closed link's socket is gone. */
        final CompletableFuture<Void> gone = new CompletableFuture<>();
        int reconnects;
        ProbeOutcome lastAnswer;

        FakeLink(WorkerEndpoint endpoint) {
            this.endpoint = endpoint;
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
            CompletableFuture<ProbeOutcome> f = new CompletableFuture<>();
            sent.add(new Probe(this, f));
            return f;
        }

        @Override
        public dev.rollcall.core.internal.ProbeClient.Watched probeAndWatch(
                Duration timeout, java.util.function.Consumer<ProbeOutcome> push,
                java.util.function.Consumer<Status> end) {
            watches++;
            CompletableFuture<ProbeOutcome> f = new CompletableFuture<>();
            if (unaryOnly) {
                f.complete(new ProbeOutcome.Failed(Status.Code.UNIMPLEMENTED, "UNIMPLEMENTED"));
                return new dev.rollcall.core.internal.ProbeClient.Watched(f, () -> { });
            }
            Probe probe = new Probe(this, f, push, end);
            sent.add(probe);
            return new dev.rollcall.core.internal.ProbeClient.Watched(f, () -> {
                if (!f.isDone()) {
                    f.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "cancelled"));
                }
                if (onPush == push) {
                    onPush = null;
                    onEnd = null;
                }
            });
        }

        /** The worker pushes a new answer over its WatchWorkerInfo stream. */
        void push(String version, String instanceId, java.util.Map<String, String> labels,
                  dev.rollcall.api.ServingState state) {
            lastAnswer = new ProbeOutcome.Answered(new WorkerInfo(endpoint, version, instanceId, labels, List.of()),
                    state);
            onPush.accept(new ProbeOutcome.Answered(new WorkerInfo(endpoint, version, instanceId, labels, List.of()),
                    state));
        }

        /** Whether a WatchWorkerInfo stream is open. */
        boolean streaming() {
            return onPush != null;
        }

        @Override
        public boolean ready() {
            return ready && !closed;
        }

        @Override
        public void whenNotReady(Runnable then) {
            if (!ready()) {
                then.run();
            } else {
                onNotReady = then;
            }
        }

        @Override
        public void resetConnectBackoff() {
        }

        @Override
        public ManagedChannel channel() {
            return null;
        }

        @Override
        public void reconnect() {
            reconnects++;
            drop();
        }

        @Override
        public CompletableFuture<Void> close(boolean untilGone) {
            closed = true;
            return slowClose && untilGone ? gone : CompletableFuture.completedFuture(null);
        }

        /** The connection drops (the worker restarted or died). */
        void drop() {
            ready = false;
            java.util.function.Consumer<Status> end = onEnd;
            onPush = null;
            onEnd = null;
            if (end != null) {
                end.accept(Status.UNAVAILABLE.withDescription("connection lost"));
            }
            Runnable r = onNotReady;
            onNotReady = null;
            if (r != null) {
                r.run();
            }
        }
    }

    final List<Probe> sent = new ArrayList<>();
    /** Closed links keep their socket until the test completes their {@code gone}. */
    boolean slowClose;
    /** Workers that answer WatchWorkerInfo with UNIMPLEMENTED (older ones). */
    boolean unaryOnly;
    final List<FakeLink> links = new ArrayList<>();

    @Override
    public Link open(WorkerEndpoint endpoint) {
        FakeLink link = new FakeLink(endpoint);
        links.add(link);
        return link;
    }

    /** Probes sent and not answered yet. */
    List<Probe> unanswered() {
        return sent.stream().filter(p -> !p.result.isDone()).toList();
    }

    /** The one unanswered probe to {@code url}. */
    Probe pending(String url) {
        List<Probe> p = unanswered().stream().filter(x -> x.link.endpoint.url().equals(url)).toList();
        if (p.size() != 1) {
            throw new AssertionError("expected one unanswered probe to " + url + ", found " + p.size());
        }
        return p.get(0);
    }

    /** The first link opened to {@code url}. */
    FakeLink firstLinkTo(String url) {
        return links.stream().filter(l -> l.endpoint.url().equals(url)).findFirst()
                .orElseThrow(() -> new AssertionError("no link to " + url));
    }

    long sentTo(String url) {
        return sent.stream().filter(x -> x.link.endpoint.url().equals(url)).count();
    }
}
