package dev.rollcall.conformance;

import dev.rollcall.api.WorkerEndpoint;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Checks a running worker from outside against the rules of the {@code rollcall.v1} protocol
 * ({@code docs/protocol.md}, W1 to W22), as a coordinator sees it: over the network, with
 * {@code WorkerInfo}, {@code WatchWorkerInfo}, {@code ReleaseWorker} and gRPC server reflection,
 * every call with a deadline.
 * The same checks as {@code rollcall conform grpc://host:port}; in a JUnit test:
 *
 * <pre>{@code
 * WorkerConformance.builder().target("127.0.0.1", port).build().check().requirePassed();
 * }</pre>
 *
 * <p><b>What it observes.</b> Several {@code WorkerInfo} calls over two connections (W1, W2), and
 * every answer, unary or streamed, for the instance id (W3: not empty, the same in all of them),
 * the version (W4), the state (W12: a known value) and the bounds of W14 (the coordinator's own
 * check; answers are also limited to 1 MiB on the wire); a request carrying fields v1 does not know
 * (W15); reflection's {@code list_services}, which may be {@code UNIMPLEMENTED} (W17). Then two
 * {@code WatchWorkerInfo} streams on one connection (W16: a worker must take two), one asking for
 * heartbeats and one not, watched for {@link Builder#watch} while {@code WorkerInfo} is asked about
 * every 200 ms over another connection: the first answers equal the unary answer (W5); a change
 * that {@code WorkerInfo} shows must reach the stream within the call timeout, and no answer may be
 * older than one before it (W6, W12); the streams stay open (W7) or the method is
 * {@code UNIMPLEMENTED} (W8); revisions never go down, one answer per revision, and
 * {@code WorkerInfo} never says a revision lower than one already pushed (W9); the heartbeat granted
 * is in every answer of its stream, the stream is never silent for longer than it plus
 * {@link Builder#heartbeatSlack} nor repeats more than about twice per interval, and the stream that
 * asked for none gets no repeats (W10); a stream that floods the kit (more than 10,000 answers, or more
 * than 16 MiB of answers, unread: its budget) is cut off and fails W6, so that a run keeps at most
 * that much of a worker's answers per stream, whatever the worker sends.
 *
 * <p><b>Required and recommended.</b> A rule whose absence coordinators tolerate is recommended
 * ({@code docs/protocol.md} marks each): no stream (W8), revision 0 (W9), no heartbeat granted (W10), no
 * reflection (W17), no {@code ReleaseWorker} (W18 to W22). Its absence is reported
 * {@link RuleResult.Outcome#NOT_IMPLEMENTED} with what coordinators lose, and does not fail the run
 * unless it is {@link Builder#strict}; a recommended rule implemented wrongly (revisions that go down, a
 * heartbeat granted and not kept) fails.
 * Exact drain (W18 to W22): a third stream, on a connection of its own, is a holder stream (a random
 * {@code holder_id} of 64 characters) and must answer as any watch; holder ids of 65 characters or
 * with a space are refused with {@code INVALID_ARGUMENT} (W18); {@code ReleaseWorker} with another
 * process's {@code instance_id} is refused with {@code FAILED_PRECONDITION} and with this one's
 * answers OK, {@code holders} 0 while serving (W20); an answer that is not {@code DRAINING} says
 * {@code holders} 0 (W21). A worker that answers {@code ReleaseWorker} {@code UNIMPLEMENTED} is from
 * before exact drain: W18 to W22 are not implemented (recommended; it keeps W13).
 * With {@link Builder#expectDrain}, after that watch {@link Builder#onWaiting} tells the operator to
 * stop the worker while the kit goes on watching, and {@code DRAINING} must be pushed, then the
 * stream end, then the address refuse new calls (W13). In a drain the two streams hold the worker
 * too (a second holder id), so that every watcher the kit brings is a holder: every
 * {@code DRAINING} answer must count at least the kit's holder streams (W21); the kit holds the
 * worker for {@link Builder#hold}, during which it must go on serving (W19), then releases the
 * holder stream's id (a lower count must be pushed as a new revision, W21), then the streams' id,
 * and the stream must end within the call timeout of that last release (W22, the time reported). With {@link Builder#expectRestart}: the
 * operator restarts the worker at the same address, and a new instance id must answer there (W3),
 * the same over another connection.
 *
 * <p><b>What it cannot observe</b>, and reports as not checked (or checks only in part): that the
 * data service is on the same port and process (W1); the absence of side effects of
 * {@code WorkerInfo} (W2); that an instance id is new on every start, unless a restart is watched
 * (W3); changes the worker does not make while it is watched (W6, W12: a worker that never changes
 * passes them unobserved: make it change, e.g. with a drain); anything about HTTP/2 flow control
 * (W11); the limits of W16 beyond two streams on one connection (they would cost the worker load the
 * kit should not make); whether a worker reuses ports. A pass is evidence, not proof: it says the
 * worker kept every rule while it was watched.
 *
 * <p>Threading: {@link #check()} blocks the calling thread for about {@link Builder#watch} (or up to
 * {@link Builder#waitFor} with an expectation) and may be called again; gRPC's callbacks run on
 * daemon threads named {@code rollcall-conform-*}, which end with the run, and every channel it
 * opens is closed when it returns. Failures of the worker are results, never exceptions.
 */
public final class WorkerConformance {

    /** What the operator does to the worker while a run watches it. */
    public enum Expectation {
        /** Stops it gracefully: SIGTERM, {@code RollcallWorker.close()}. */
        DRAIN,
        /** Restarts it on the same address. */
        RESTART
    }

    final String host;
    final int port;
    final ChannelCredentials credentials;
    final Duration callTimeout;
    final Duration watch;
    final Duration heartbeat;
    final Duration heartbeatSlack;
    final boolean expectDrain;
    final boolean expectRestart;
    final Duration waitFor;
    final Duration hold;
    final Consumer<Expectation> onWaiting;
    final boolean strict;

    private WorkerConformance(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.credentials = b.credentials;
        this.callTimeout = b.callTimeout;
        this.watch = b.watch;
        this.heartbeat = b.heartbeat;
        this.heartbeatSlack = b.heartbeatSlack;
        this.expectDrain = b.expectDrain;
        this.expectRestart = b.expectRestart;
        this.waitFor = b.waitFor;
        this.hold = b.hold;
        this.onWaiting = b.onWaiting;
        this.strict = b.strict;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code host:port}, as the report names it. */
    public String target() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * Runs every check once and returns what it found.
     *
     * @return one result per rule; a worker that breaks rules is a report with failures, not an exception
     */
    public ConformanceReport check() {
        return new ConformanceRun(this).run();
    }

    /** Settings of a run; every one is checked when it is set and named when it is refused. */
    public static final class Builder {
        private String host;
        private int port;
        private ChannelCredentials credentials = InsecureChannelCredentials.create();
        private Duration callTimeout = Duration.ofSeconds(2);
        private Duration watch = Duration.ofSeconds(3);
        private Duration heartbeat = Duration.ofSeconds(1);
        private Duration heartbeatSlack = Duration.ofMillis(500);
        private boolean expectDrain;
        private boolean expectRestart;
        private Duration waitFor = Duration.ofSeconds(60);
        private Duration hold = Duration.ofMillis(750);
        private Consumer<Expectation> onWaiting = e -> { };
        private boolean strict;

        private Builder() {
        }

        /** The worker's address; plaintext unless {@link #credentials} says otherwise. Required. */
        public Builder target(String host, int port) {
            Objects.requireNonNull(host, "host");
            if (host.isBlank()) {
                throw new IllegalArgumentException("host is empty");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is not in 1..65535");
            }
            this.host = host;
            this.port = port;
            return this;
        }

        /** The worker's endpoint; {@code grpcs://} uses TLS with the JDK's trust store (see {@link #credentials}). */
        public Builder target(WorkerEndpoint endpoint) {
            target(endpoint.host(), endpoint.port());
            if (endpoint.tls()) {
                credentials = TlsChannelCredentials.create();
            }
            return this;
        }

        /** How to connect: {@code InsecureChannelCredentials} (the default), {@code TlsChannelCredentials}. */
        public Builder credentials(ChannelCredentials credentials) {
            this.credentials = Objects.requireNonNull(credentials, "credentials");
            return this;
        }

        /** The deadline of each call, and how long a change may take to reach the stream (default 2 s, a coordinator's probe timeout). */
        public Builder callTimeout(Duration timeout) {
            this.callTimeout = positive(timeout, "callTimeout");
            return this;
        }

        /**
         * How long the streams are watched in the steady state, before anything is asked of the operator
         * (default 3 s): longer than the heartbeat, so that W10 is seen.
         */
        public Builder watch(Duration watch) {
            this.watch = positive(watch, "watch");
            return this;
        }

        /** The heartbeat one of the streams asks for (default 1 s; {@code heartbeat_millis}, 1 ms to 60 s). */
        public Builder heartbeat(Duration heartbeat) {
            positive(heartbeat, "heartbeat");
            if (heartbeat.toMillis() < 1 || heartbeat.toMillis() > 60_000) {
                throw new IllegalArgumentException("heartbeat " + heartbeat + " is not within 1 ms..60 s");
            }
            this.heartbeat = heartbeat;
            return this;
        }

        /** How much longer than the granted heartbeat a stream may stay silent before W10 fails (default 500 ms: scheduling, GC). */
        public Builder heartbeatSlack(Duration slack) {
            Objects.requireNonNull(slack, "heartbeatSlack");
            if (slack.isNegative()) {
                throw new IllegalArgumentException("heartbeatSlack " + slack + " is negative");
            }
            this.heartbeatSlack = slack;
            return this;
        }

        /** Wait for the operator to stop the worker gracefully while the run watches, and check the drain (W13). */
        public Builder expectDrain(boolean expect) {
            this.expectDrain = expect;
            return this;
        }

        /** Wait for the operator to restart the worker on the same address, and check its new instance id (W3). */
        public Builder expectRestart(boolean expect) {
            this.expectRestart = expect;
            return this;
        }

        /** How long to wait for an expected drain and restart, together (default 60 s). */
        public Builder waitFor(Duration wait) {
            this.waitFor = positive(wait, "waitFor");
            return this;
        }

        /**
         * In an expected drain, how long the kit's holder streams hold the worker after {@code DRAINING}
         * is seen before the kit lets go (default 750 ms: longer than the 500 ms {@code drain-quiet} of
         * Rollcall's workers, so that a worker that only waits out a quiet period is told apart from one
         * that waits for its holders; shorter than their 5 s {@code shutdown-grace}, which bounds every
         * wait of a drain). The worker must go on serving meanwhile (W19).
         */
        public Builder hold(Duration hold) {
            this.hold = positive(hold, "hold");
            return this;
        }

        /**
         * Called once, on the checking thread, after the steady {@link #watch}, when the run starts to wait
         * for the operator (with the first expectation: {@code DRAIN} when both are expected): the moment to
         * drain or restart the worker. The run's clock goes on while it runs; one that takes long (a restart
         * in the callback itself) should hand the work to another thread.
         */
        public Builder onWaiting(Consumer<Expectation> callback) {
            this.onWaiting = Objects.requireNonNull(callback, "onWaiting");
            return this;
        }

        /**
         * Whether a recommended rule the worker does not implement fails the run (default false). A rule is
         * recommended when coordinators tolerate its absence (revisions, heartbeats, the stream, reflection,
         * exact drain: {@code docs/protocol.md} marks each); by default its absence is reported
         * {@link RuleResult.Outcome#NOT_IMPLEMENTED}, saying what coordinators lose, and the run passes.
         * Strict, it is {@link RuleResult.Outcome#FAILED}. A recommended rule implemented wrongly fails either way.
         */
        public Builder strict(boolean strict) {
            this.strict = strict;
            return this;
        }

        /** @throws IllegalStateException when no target was set */
        public WorkerConformance build() {
            if (host == null) {
                throw new IllegalStateException("no target: call target(host, port)");
            }
            return new WorkerConformance(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " " + d + " is not positive");
            }
            return d;
        }
    }
}
