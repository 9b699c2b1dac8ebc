package dev.rollcall.core.internal.probe;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.protocols.ProbeProtocols;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link ProbeTransport} over the {@link ProbeProtocol} {@code rollcall.probe.protocol} chose: the
 * scheduler's links, probes and streams in the protocol's words. {@code rollcall} keeps
 * {@link ProbeTransport#grpc} as it is. Channels are {@link ProbeClient}'s, built lazily on its
 * starter thread, only when the protocol connects (or the user asks for one); protocols are called
 * on the starter thread too. What a protocol hands back is checked here: an exception, an
 * exceptional future or an answer out of bounds is a failed probe naming the protocol, and a probe
 * that never completes fails one second after its deadline.
 *
 * <p>No HTTP/2 keepalive pings: these protocols talk to servers Rollcall does not own, and a server
 * may punish pings (grpc-java's default answers pings more often than every 5 minutes with a
 * {@code too_many_pings} GOAWAY: a reconnect, and the worker out in between). A kept link is
 * checked by {@link LivenessCalls} instead: the protocol's own probe every {@code keepalive-time}.
 * Thread-safe.
 */
public final class ProtocolTransport implements ProbeTransport {

    /**
     * How a kept link of a protocol other than {@code rollcall} is checked ({@link LivenessCalls}):
     * a probe every {@code time} ({@code rollcall.probe.keepalive-time}), {@code timeout}
     * ({@code rollcall.probe.keepalive-timeout}) its deadline.
     */
    public record Liveness(Duration time, Duration timeout) {
        public Liveness {
            Objects.requireNonNull(time, "time");
            Objects.requireNonNull(timeout, "timeout");
        }
    }

    /** How long after its deadline a protocol's probe that has not completed is failed for it. */
    private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ProbeClient client;
    /** How kept links are checked; null: never (one-off probes keep no link). */
    private final Liveness liveness;
    private final String name;
    private final ProbeProtocol protocol;
    private final ProbeCapabilities sees;
    private final int maxResponseBytes;

    private ProtocolTransport(ProbeClient client, Liveness liveness, ProbeProtocols.Chosen chosen,
                              int maxResponseBytes) {
        this.client = client;
        this.liveness = liveness;
        this.name = chosen.name();
        this.protocol = chosen.protocol();
        this.sees = protocol.capabilities();
        this.maxResponseBytes = maxResponseBytes;
    }

    /**
     * The transport for {@code chosen}: {@link ProbeTransport#grpc} with {@code pings} (HTTP/2
     * keepalive, at least 10 s apart: grpc-java's floor) for {@code rollcall}, whose workers permit
     * them (docs/protocol.md); else one over the protocol, without pings, whose kept links are
     * checked every {@code checks.time()} ({@code keepalive-time}) with {@code checks.timeout()} as
     * the deadline. Null: no pings, no checks (one-off probes keep no link).
     */
    public static ProbeTransport of(ProbeProtocols.Chosen chosen, ProbeClient client, ProbeClient.Http2Keepalive pings,
                                    Liveness checks, int maxResponseBytes) {
        return chosen.isRollcall() ? ProbeTransport.grpc(client, pings)
                : new ProtocolTransport(client, chosen.connects() ? checks : null, chosen, maxResponseBytes);
    }

    @Override
    public boolean sends() {
        return asks(sees);
    }

    /** Whether any part of an answer comes from the worker: else nothing is sent to it. */
    static boolean asks(ProbeCapabilities c) {
        return c.version() == ProbeCapabilities.Source.WORKER || c.instance() == ProbeCapabilities.Source.WORKER
                || c.state() == ProbeCapabilities.Source.WORKER || c.labels() == ProbeCapabilities.Source.WORKER
                || c.services() == ProbeCapabilities.Source.WORKER;
    }

    @Override
    public boolean pushes() {
        return sees.push();
    }

    @Override
    public boolean followsLabels() {
        return sees.version() == ProbeCapabilities.Source.DISCOVERY || sees.instance() == ProbeCapabilities.Source.DISCOVERY
                || sees.labels() == ProbeCapabilities.Source.DISCOVERY;
    }

    @Override
    public Link open(WorkerEndpoint endpoint) {
        return new ProtocolLink(endpoint);
    }

    /**
     * What is wrong with {@code outcome} as a protocol's answer, or null: the bounds of a
     * {@code rollcall.v1} answer ({@link AnswerCheck}) on what the protocol put in it. An empty
     * version the worker answered is its answer, as in {@code rollcall.v1} (a datafusion-distributed
     * worker that never called {@code with_version()}): the policy judges it. An empty claim
     * ({@code versionSource} discovery) is no claim.
     */
    static String problem(ProbeOutcome.Answered answer, ProbeCapabilities.Source versionSource) {
        WorkerInfo info = answer.info();
        String version = info.version();
        if (version.isEmpty()) {
            return versionSource == ProbeCapabilities.Source.WORKER ? bounds(info) : "no version";
        }
        String bad = WorkerEndpoint.versionLabelProblem(version);
        return bad != null ? bad : bounds(info);
    }

    /** What is wrong with the parts of {@code info} other than its version, or null. */
    private static String bounds(WorkerInfo info) {
        if (info.instanceId().length() > AnswerCheck.MAX_INSTANCE_ID_CHARS) {
            return "instance id is " + info.instanceId().length() + " characters long (at most "
                    + AnswerCheck.MAX_INSTANCE_ID_CHARS + ")";
        }
        if (info.labels().size() > AnswerCheck.MAX_LABELS) {
            return info.labels().size() + " labels (at most " + AnswerCheck.MAX_LABELS + ")";
        }
        for (Map.Entry<String, String> label : info.labels().entrySet()) {
            if (label.getKey().length() > AnswerCheck.MAX_LABEL_KEY_CHARS
                    || label.getValue().length() > AnswerCheck.MAX_LABEL_VALUE_CHARS) {
                return "label '" + PeerText.escape(label.getKey(), 64) + "' is too long";
            }
        }
        if (info.services().size() > AnswerCheck.MAX_SERVICES) {
            return info.services().size() + " services (at most " + AnswerCheck.MAX_SERVICES + ")";
        }
        return null;
    }

    /** {@code outcome} as the scheduler may take it: checked, and never null. */
    private ProbeOutcome checked(ProbeOutcome outcome, Throwable failure) {
        if (outcome == null) {
            return new ProbeOutcome.Failed(Status.Code.INTERNAL, "probe protocol '" + name + "' failed: "
                    + PeerText.escape(String.valueOf(failure), 300));
        }
        if (outcome instanceof ProbeOutcome.Answered a) {
            String problem = problem(a, sees.version());
            if (problem != null) {
                return new ProbeOutcome.Failed(Status.Code.INTERNAL, "malformed answer (" + name + "): "
                        + PeerText.escape(problem, 300));
            }
        }
        return outcome;
    }

    /** One worker's link: a channel when the protocol connects or the user asks for one. */
    private final class ProtocolLink extends LazyChannelLink {
        /** The worker as discovery listed it at the last probe: what the liveness calls ask about. */
        private volatile WorkerEndpoint current;
        /** The checks of the kept connection; null without liveness or a timer. */
        private final LivenessCalls checks;

        ProtocolLink(WorkerEndpoint endpoint) {
            super(client, endpoint, null); // no pings: see the class comment
            this.current = endpoint;
            this.checks = liveness == null || !(lane instanceof ScheduledExecutorService timer) ? null
                    : new LivenessCalls(timer, liveness, name, () -> current, this::existing,
                            timeout -> probe(current, timeout));
        }

        /** The request for {@code current}, or null once the link is closed. */
        private ProbeRequest request(WorkerEndpoint current, Duration timeout) {
            if (!sees.connects()) {
                return isClosed() ? null : new ProbeRequest(current, null, timeout, maxResponseBytes);
            }
            ManagedChannel c = built();
            return c == null ? null : new ProbeRequest(current, c, timeout, maxResponseBytes);
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(Duration timeout) {
            return probe(endpoint, timeout);
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(WorkerEndpoint current, Duration timeout) {
            this.current = current;
            CompletableFuture<ProbeOutcome> outcome = new CompletableFuture<>();
            onStarter(outcome, () -> {
                ProbeRequest request = request(current, timeout);
                if (request == null) {
                    outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "link closed"));
                    return;
                }
                CompletableFuture<ProbeOutcome> result = protocol.probe(request);
                if (result == null) {
                    outcome.complete(checked(null, new NullPointerException("probe returned null")));
                    return;
                }
                result.whenComplete((o, failure) -> outcome.complete(checked(o, failure)));
                if (!outcome.isDone()) {
                    giveUpAfter(timeout, outcome, () -> { });
                }
            });
            return outcome;
        }

        /** Runs {@code start} on the starter thread; a closed client, or a protocol that throws, completes {@code outcome}. */
        private void onStarter(CompletableFuture<ProbeOutcome> outcome, Runnable start) {
            try {
                starter.execute(() -> {
                    try {
                        start.run();
                    } catch (RejectedExecutionException e) {
                        outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
                    } catch (RuntimeException bug) {
                        outcome.complete(checked(null, bug));
                    }
                });
            } catch (RejectedExecutionException e) {
                outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
            }
        }

        /** Fails {@code outcome} when it is still open {@link #GRACE_NANOS} after {@code timeout}, then runs {@code cancel}. */
        private void giveUpAfter(Duration timeout, CompletableFuture<ProbeOutcome> outcome, Runnable cancel) {
            if (!(lane instanceof ScheduledExecutorService timer)) {
                return; // the shared event loop of one-off probes: the protocol's own deadline must do
            }
            try {
                ScheduledFuture<?> t = timer.schedule(() -> {
                    if (outcome.complete(new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED,
                            "DEADLINE_EXCEEDED: no answer within " + timeout.toMillis() + " ms (" + name + ")"))) {
                        cancel.run();
                    }
                }, timeout.toNanos() + GRACE_NANOS, TimeUnit.NANOSECONDS);
                outcome.whenComplete((o, e) -> t.cancel(false));
            } catch (RejectedExecutionException stopped) {
                outcome.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
            }
        }

        @Override
        public ProbeClient.Watched probeAndWatch(Duration timeout, Duration heartbeat, ProbeClient.StreamListener listener) {
            return probeAndWatch(endpoint, timeout, heartbeat, listener);
        }

        @Override
        public ProbeClient.Watched probeAndWatch(WorkerEndpoint current, Duration timeout, Duration heartbeat,
                                                 ProbeClient.StreamListener listener) {
            if (!sees.push()) {
                return new ProbeClient.Watched(probe(current, timeout), () -> { });
            }
            this.current = current;
            CompletableFuture<ProbeOutcome> first = new CompletableFuture<>();
            // 0: waiting for the first answer; 1: answered, the watch is live; 2: over.
            AtomicInteger phase = new AtomicInteger();
            AtomicReference<ProbeProtocol.Watch> started = new AtomicReference<>();
            AtomicBoolean cancelled = new AtomicBoolean();
            Runnable cancel = () -> {
                cancelled.set(true);
                phase.set(2);
                ProbeProtocol.Watch w = started.get();
                if (w != null) {
                    w.cancel();
                }
            };
            onStarter(first, () -> {
                ProbeRequest request = request(current, timeout);
                if (request == null) {
                    first.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "link closed"));
                    return;
                }
                ProbeProtocol.Watch w = protocol.watch(request, new ProbeProtocol.WatchListener() {
                    @Override
                    public void answer(ProbeOutcome outcome) {
                        ProbeOutcome o = outcome != null ? checked(outcome, null)
                                : checked(null, new NullPointerException("a null answer"));
                        if (phase.compareAndSet(0, 1)) {
                            first.complete(o);
                        } else if (phase.get() == 1) {
                            listener.answer(o);
                        }
                        if (!o.answered() && phase.get() == 1) {
                            phase.set(2);
                            ProbeProtocol.Watch s = started.get();
                            if (s != null) {
                                s.cancel(); // a malformed push: the stream is over, as rollcall.v1's
                            }
                        }
                    }

                    @Override
                    public void ended(Status status) {
                        if (phase.compareAndSet(0, 2)) {
                            first.complete(ProbeFailures.failed(status.asRuntimeException(), timeout));
                        } else if (phase.compareAndSet(1, 2)) {
                            listener.ended(status);
                        }
                    }
                });
                started.set(w);
                if (cancelled.get() && w != null) {
                    w.cancel(); // cancelled before the watch had started
                }
                if (!first.isDone()) {
                    giveUpAfterFirst(timeout, first, phase, cancel);
                }
            });
            return new ProbeClient.Watched(first, cancel::run);
        }

        /** The first answer's deadline, kept on the link's event loop: the watch is cancelled when nothing came. */
        private void giveUpAfterFirst(Duration timeout, CompletableFuture<ProbeOutcome> first, AtomicInteger phase,
                                      Runnable cancel) {
            if (!(lane instanceof ScheduledExecutorService timer)) {
                return;
            }
            try {
                ScheduledFuture<?> t = timer.schedule(() -> {
                    if (phase.compareAndSet(0, 2)) {
                        first.complete(new ProbeOutcome.Failed(Status.Code.DEADLINE_EXCEEDED,
                                "DEADLINE_EXCEEDED: no answer within " + timeout.toMillis() + " ms"));
                        cancel.run();
                    }
                }, timeout.toNanos(), TimeUnit.NANOSECONDS);
                first.whenComplete((o, e) -> t.cancel(false));
            } catch (RejectedExecutionException stopped) {
                first.complete(new ProbeOutcome.Failed(Status.Code.CANCELLED, "probe client closed"));
            }
        }

        @Override
        boolean connects() {
            return sees.connects();
        }

        @Override
        void watched() {
            if (checks != null) {
                checks.start(); // watched: the worker is kept, and its connection is checked from now on
            }
        }

        /** Never builds a channel only to reset it: one that was never built has nothing to reset. */
        @Override
        ManagedChannel channelToReset() {
            return existing();
        }

        @Override
        void closing() {
            if (checks != null) {
                checks.close();
            }
        }
    }
}
