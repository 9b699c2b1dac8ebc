package dev.rollcall.core.internal.probe;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Links whose probes the test answers by hand, and whose connections it drops. Single-threaded. */
public final class FakeTransport implements ProbeTransport {

    /**
     * One probe sent, waiting for the test to answer it; a probe that opened the worker's stream
     * ({@code listener} set) leaves the stream open once answered.
     */
    public record Probe(FakeLink link, CompletableFuture<ProbeOutcome> result,
                 ProbeClient.StreamListener listener, FakeStream stream) {

        Probe(FakeLink link, CompletableFuture<ProbeOutcome> result) {
            this(link, result, null, null);
        }

        public void answer(String version, String instanceId) {
            answer(version, instanceId, Map.of());
        }

        public void answer(String version, String instanceId, Map<String, String> labels) {
            answer(version, instanceId, labels, ServingState.SERVING);
        }

        public void answer(String version, String instanceId, Map<String, String> labels,
                    ServingState state) {
            answer(version, instanceId, labels, state, 0);
        }

        /** Answers with a revision; a stream's worker grants {@link FakeTransport#heartbeatMillis}. */
        public void answer(String version, String instanceId, Map<String, String> labels,
                    ServingState state, long revision) {
            WorkerEndpoint e = link.endpoint;
            link.ready = true;
            link.lastAnswer = new ProbeOutcome.Answered(new WorkerInfo(e, version, instanceId, labels, List.of()), state,
                    revision);
            if (listener != null && !result.isDone()) { // the stream stays open, as a worker keeps it
                link.stream = stream;
                stream.heartbeatMillis = link.granted();
            }
            result.complete(link.lastAnswer);
        }

        public void fail() {
            result.complete(new ProbeOutcome.Failed(Status.Code.UNAVAILABLE, "UNAVAILABLE: refused"));
        }
    }

    public final class FakeLink implements Link {
        public final WorkerEndpoint endpoint;
        boolean ready;
        public boolean closed;
        Runnable onNotReady;
        /** The open WatchWorkerInfo stream, once its first answer came; null when none. */
        public FakeStream stream;
        /** The heartbeat the last stream opened over it asked for. */
        public Duration askedHeartbeat;
        public int watches;
        /** Completed by the test when {@link #slowClose}: the closed link's socket is gone. */
        public final CompletableFuture<Void> gone = new CompletableFuture<>();
        public int reconnects;
        ProbeOutcome lastAnswer;

        FakeLink(WorkerEndpoint endpoint) {
            this.endpoint = endpoint;
        }

        /** What its worker grants a stream: the transport's {@link #heartbeatMillis}. */
        long granted() {
            return heartbeatMillis;
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
            CompletableFuture<ProbeOutcome> f = new CompletableFuture<>();
            sent.add(new Probe(this, f));
            return f;
        }

        @Override
        public ProbeClient.Watched probeAndWatch(
                Duration timeout, Duration heartbeat, ProbeClient.StreamListener listener) {
            watches++;
            askedHeartbeat = heartbeat;
            CompletableFuture<ProbeOutcome> f = new CompletableFuture<>();
            if (unaryOnly) {
                f.complete(new ProbeOutcome.Failed(Status.Code.UNIMPLEMENTED, "UNIMPLEMENTED"));
                return new ProbeClient.Watched(f, () -> { });
            }
            FakeStream stream = new FakeStream(this, listener, f);
            sent.add(new Probe(this, f, listener, stream));
            return new ProbeClient.Watched(f, stream);
        }

        /** The worker pushes a new answer over its WatchWorkerInfo stream. */
        public void push(String version, String instanceId, Map<String, String> labels,
                  ServingState state) {
            push(version, instanceId, labels, state, 0);
        }

        /** The worker pushes a new answer of {@code revision} over its WatchWorkerInfo stream. */
        public void push(String version, String instanceId, Map<String, String> labels,
                  ServingState state, long revision) {
            lastAnswer = new ProbeOutcome.Answered(new WorkerInfo(endpoint, version, instanceId, labels, List.of()),
                    state, revision);
            stream.listener.answer(lastAnswer);
        }

        /** The worker repeats its last answer over its stream (a heartbeat). */
        public void heartbeat() {
            stream.listener.repeated();
        }

        /** Whether a WatchWorkerInfo stream is open. */
        public boolean streaming() {
            return stream != null;
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
        public void drop() {
            ready = false;
            FakeStream open = stream;
            stream = null;
            if (open != null) {
                open.listener.ended(Status.UNAVAILABLE.withDescription("connection lost"));
            }
            Runnable r = onNotReady;
            onNotReady = null;
            if (r != null) {
                r.run();
            }
        }
    }

    /** One WatchWorkerInfo stream: the probe's until its first answer, then the link's. */
    public static final class FakeStream implements ProbeClient.Watch {
        final FakeLink link;
        public final ProbeClient.StreamListener listener;
        final CompletableFuture<ProbeOutcome> first;
        public long heartbeatMillis;
        boolean cancelled;

        FakeStream(FakeLink link, ProbeClient.StreamListener listener,
                   CompletableFuture<ProbeOutcome> first) {
            this.link = link;
            this.listener = listener;
            this.first = first;
        }

        @Override
        public void cancel() {
            cancelled = true;
            if (!first.isDone()) {
                first.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "cancelled"));
            }
            if (link.stream == this) {
                link.stream = null;
            }
        }

        @Override
        public long heartbeatMillis() {
            return heartbeatMillis;
        }
    }

    public final List<Probe> sent = new ArrayList<>();
    /** What the workers grant the streams opened to them (0: no heartbeats, as workers before them). */
    public long heartbeatMillis;
    /** Closed links keep their socket until the test completes their {@code gone}. */
    public boolean slowClose;
    /** Workers that answer WatchWorkerInfo with UNIMPLEMENTED (older ones). */
    public boolean unaryOnly;
    public final List<FakeLink> links = new ArrayList<>();

    @Override
    public Link open(WorkerEndpoint endpoint) {
        FakeLink link = new FakeLink(endpoint);
        links.add(link);
        return link;
    }

    /** Probes sent and not answered yet. */
    public List<Probe> unanswered() {
        return sent.stream().filter(p -> !p.result.isDone()).toList();
    }

    /** The one unanswered probe to {@code url}. */
    public Probe pending(String url) {
        List<Probe> p = unanswered().stream().filter(x -> x.link.endpoint.url().equals(url)).toList();
        if (p.size() != 1) {
            throw new AssertionError("expected one unanswered probe to " + url + ", found " + p.size());
        }
        return p.get(0);
    }

    /** The first link opened to {@code url}. */
    public FakeLink firstLinkTo(String url) {
        return links.stream().filter(l -> l.endpoint.url().equals(url)).findFirst()
                .orElseThrow(() -> new AssertionError("no link to " + url));
    }

    public long sentTo(String url) {
        return sent.stream().filter(x -> x.link.endpoint.url().equals(url)).count();
    }
}
