package dev.rollcall.conformance;

import static dev.rollcall.conformance.Answers.ms;
import static dev.rollcall.conformance.Answers.same;
import static dev.rollcall.conformance.Answers.status;

import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.conformance.Calls.Release;
import dev.rollcall.conformance.WatchedStream.Event;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * W18 to W22 (exact drain) as a coordinator that holds workers under leases sees them. Beside the
 * run's two streams it opens a holder stream of its own (a random {@code holder_id} of 64
 * characters, the longest allowed) on a connection of its own; after the first answers it asks for
 * two holder ids out of bounds and sends {@code ReleaseWorker} for another process, for an id that
 * holds nothing on the worker (a stranger's: it must be refused with {@code NOT_FOUND}, again while
 * the worker drains, and the worker stays held) and for this one (W18, W20). A worker that answers {@code ReleaseWorker} {@code UNIMPLEMENTED} is from before exact
 * drain: optional, it keeps W13, and W18 to W22 say so. With {@code expectDrain} the run's two
 * streams hold the worker too (a second id), so that every watcher the kit brings is a holder: once
 * {@code DRAINING} is seen the kit holds the worker for {@code hold} (it must go on serving, W19),
 * releases the holder stream's id (the count must go down, pushed, W21), then the streams' id, and
 * the worker must stop within the call timeout (W22). Confined to the run's thread.
 */
final class ExactDrain {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String NOT_IMPLEMENTED = "ReleaseWorker answered UNIMPLEMENTED (a worker from before exact"
            + " drain; coordinators send it no releases)";

    private static final String STRANGER_REFUSED = "a holder_id that holds nothing refused with NOT_FOUND; ";

    private final ConformanceRun run;
    private final WorkerConformance c;
    private final Findings f;
    private final long timeoutNanos;
    /** The holder stream's id: 64 printable ASCII characters, the upper bound of W18. */
    private final String holderId = id(64);
    /** The id of the run's two streams in a drain. */
    private final String streamsId = id(24);
    /** An id no stream of the kit's ever uses: a stranger's release, which must be refused (W20). */
    private final String strangerId = id(32);
    private ManagedChannel channel;
    private WatchedStream holder;
    /** Null until ReleaseWorker was asked. */
    private Boolean implemented;
    private long drainSeenAt;
    private int holdersBefore = -1;
    private long revisionBefore;
    private long firstReleaseAt;
    private int firstReleaseLeft;
    private long countdownAt;
    private String countdown;
    private long lastReleaseAt;
    private String releases = "";
    private String anew = "";

    ExactDrain(ConformanceRun run) {
        this.run = run;
        this.c = run.settings();
        this.f = run.findings();
        this.timeoutNanos = c.callTimeout.toNanos();
        run.every().kitHolding(this::kitHolding);
    }

    private static String id(int chars) {
        String prefix = "rollcall-conform-";
        byte[] random = new byte[(chars - prefix.length() + 1) / 2];
        RANDOM.nextBytes(random);
        return (prefix + HexFormat.of().formatHex(random)).substring(0, chars);
    }

    /** The holder id of the run's two streams: theirs in a drain, none (an old-style watch) otherwise. */
    String streamsHolderId() {
        return c.expectDrain ? streamsId : "";
    }

    /** Opens the holder stream on a connection of its own; its events go to the run's queue. */
    void open(Calls calls, Duration deadline, BlockingQueue<Event> events) {
        channel = calls.open();
        holder = WatchedStream.open(channel, "holder", 0, holderId, deadline, events);
    }

    boolean owns(WatchedStream s) {
        return s == holder;
    }

    boolean settled() {
        return holder.answered() || holder.ended();
    }

    void cancel() {
        if (holder != null) {
            holder.cancel();
        }
    }

    /** The holder stream's own answers and end. */
    void handle(Event e) {
        if (e.answer() == null) {
            if (!holder.ended()) {
                holder.end = e.end();
                holder.endAt = e.atNanos();
                if (holder.answered() && !run.waiting() && drainSeenAt == 0) {
                    f.fail("W18", "the holder stream ended " + run.at(e.atNanos()) + " with " + status(e.end())
                            + " while the worker served: a holder stream stays open as any watch");
                }
            }
            return;
        }
        WorkerInfoResponse r = e.answer();
        holder.count++;
        String where = "the holder stream's answer " + holder.count + " (" + run.at(e.atNanos()) + ")";
        if (run.restartSeenAt() != 0 && r.getInstanceId().equals(run.restartedFrom())) {
            return;
        }
        run.every().check(where, r);
        if (holder.last != null) {
            if (Long.compareUnsigned(r.getRevision(), holder.last.getRevision()) < 0) {
                f.fail("W18", where + ": revision " + Long.toUnsignedString(r.getRevision()) + " after revision "
                        + Long.toUnsignedString(holder.last.getRevision()));
            }
            if (same(r, holder.last)) {
                f.fail("W18", where + ": the same answer again on a holder stream that asked for no heartbeat");
            }
            run.every().sameRevisionSameAnswer(where, holder.last, r);
        }
        holder.last = r;
        holder.lastAt = e.atNanos();
        seen(r, e.atNanos());
    }

    /** Every streamed answer of the kit's: when the drain was seen, and the count going down (W21). */
    void seen(WorkerInfoResponse r, long at) {
        if (r.getState() != ServingState.DRAINING || implemented != Boolean.TRUE) {
            return;
        }
        if (drainSeenAt == 0) {
            drainSeenAt = at;
        }
        if (firstReleaseAt == 0) {
            holdersBefore = r.getHolders();
            revisionBefore = r.getRevision();
        } else if (countdownAt == 0 && Integer.compareUnsigned(r.getHolders(), holdersBefore) < 0
                && Long.compareUnsigned(r.getRevision(), revisionBefore) > 0) {
            countdownAt = at;
            countdown = "holders " + holdersBefore + " -> " + r.getHolders() + " pushed as revision "
                    + Long.toUnsignedString(r.getRevision()) + " (after " + Long.toUnsignedString(revisionBefore) + ") "
                    + ms(at - firstReleaseAt) + " after the release";
        }
    }

    /** W18's id bounds and W20, once the streams have answered: a few calls, each with the run's deadline. */
    void probe() throws InterruptedException {
        if (!holder.answered()) {
            f.fail("W18", "a WatchWorkerInfo with a holder_id of 64 characters " + (holder.ended()
                    ? "ended with " + status(holder.end) : "did not answer within " + ms(timeoutNanos))
                    + " where the same request without it was answered");
            List.of("W19", "W20", "W21", "W22").forEach(rule -> f.notChecked(rule, "the holder stream gave no answer"));
            implemented = false;
            return;
        }
        String instance = holder.last.getInstanceId();
        Release other = run.calls().release(channel, holderId, "successor-of-" + instance);
        if (other.answer() == null && other.status().getCode() == Status.Code.UNIMPLEMENTED) {
            implemented = false;
            for (String rule : List.of("W18", "W19", "W20", "W21", "W22")) {
                f.notImplemented(rule, NOT_IMPLEMENTED);
            }
            return;
        }
        implemented = true;
        if (other.answer() != null) {
            f.fail("W20", "ReleaseWorker with another process's instance_id was answered OK (holders "
                    + other.answer().getHolders() + "): it must be refused with FAILED_PRECONDITION");
        } else if (other.status().getCode() != Status.Code.FAILED_PRECONDITION) {
            f.fail("W20", "ReleaseWorker with another process's instance_id: " + status(other.status())
                    + ", not FAILED_PRECONDITION");
        }
        strangerRelease(instance, "while " + Answers.state(holder.last));
        if (holder.last.getState() == ServingState.DRAINING) {
            // Already draining: a release now would let go of the worker before the kit has watched its drain.
            if (!f.failed("W20")) {
                f.pass("W20", STRANGER_REFUSED + "another process's instance_id refused with FAILED_PRECONDITION (the"
                        + " worker was already draining: no release of this one's was sent)");
            }
            badIds(instance);
            return;
        }
        Release own = run.calls().release(channel, holderId, instance);
        if (own.answer() == null) {
            f.fail("W20", "ReleaseWorker with this process's instance_id failed: " + status(own.status()));
        } else if (own.answer().getHolders() != 0) {
            f.fail("W20", "ReleaseWorker while " + Answers.state(holder.last) + " answered holders "
                    + Integer.toUnsignedString(own.answer().getHolders()) + " (0 when not draining)");
        } else if (!f.failed("W20")) {
            f.pass("W20", STRANGER_REFUSED + "another process's instance_id refused with FAILED_PRECONDITION; this"
                    + " one's answered OK"
                    + " in " + ms(own.nanos()) + ", holders " + own.answer().getHolders());
        }
        badIds(instance);
    }

    /**
     * W20: a release whose holder id holds nothing on the worker (no stream of it open, not released
     * in this drain) is refused with {@code NOT_FOUND} and changes nothing: only who holds can let go.
     */
    private void strangerRelease(String instance, String when) {
        Release r = run.calls().release(channel, strangerId, instance);
        String what = "ReleaseWorker " + when + " with a holder_id that holds nothing on the worker (no stream of it"
                + " was opened)";
        if (r.answer() != null) {
            f.fail("W20", what + " was answered OK (holders " + Integer.toUnsignedString(r.answer().getHolders())
                    + "): it must be refused with NOT_FOUND and change nothing, else whoever learns a coordinator's"
                    + " holder id, or fills the released ids, decides when the worker stops");
        } else if (r.status().getCode() != Status.Code.NOT_FOUND) {
            f.fail("W20", what + ": " + status(r.status()) + ", not NOT_FOUND");
        }
    }

    /** W18: ids out of bounds are refused with INVALID_ARGUMENT, a stream's and a release's. */
    private void badIds(String instance) throws InterruptedException {
        BlockingQueue<Event> answers = new LinkedBlockingQueue<>();
        Duration deadline = c.callTimeout;
        String[] bad = {"x".repeat(65), "rollcall conform"};
        String[] what = {"of 65 characters", "with a space (U+0020)"};
        WatchedStream[] streams = new WatchedStream[bad.length];
        for (int i = 0; i < bad.length; i++) {
            streams[i] = WatchedStream.open(channel, "bad-id", 0, bad[i], deadline, answers);
        }
        long by = System.nanoTime() + timeoutNanos;
        boolean[] judged = new boolean[bad.length];
        int seen = 0;
        while (seen < bad.length) {
            Event e = answers.poll(Math.max(0, by - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (e == null) {
                break;
            }
            int i = e.stream() == streams[0] ? 0 : 1;
            if (judged[i]) {
                continue; // the end of a stream judged already: the kit's own cancel of an accepted one
            }
            judged[i] = true;
            seen++;
            if (e.answer() != null) {
                streams[i].cancel();
                f.fail("W18", "a WatchWorkerInfo with a holder_id " + what[i] + " was accepted: 1 to 64 printable ASCII"
                        + " characters, else INVALID_ARGUMENT");
            } else if (e.end().getCode() != Status.Code.INVALID_ARGUMENT) {
                f.fail("W18", "a WatchWorkerInfo with a holder_id " + what[i] + ": " + status(e.end())
                        + ", not INVALID_ARGUMENT");
            }
        }
        if (seen < bad.length) {
            f.fail("W18", "a WatchWorkerInfo with a holder_id out of bounds was neither answered nor refused within "
                    + ms(timeoutNanos));
        }
        for (WatchedStream s : streams) {
            s.cancel();
        }
        Release badRelease = run.calls().release(channel, bad[0], instance);
        if (badRelease.answer() != null || badRelease.status().getCode() != Status.Code.INVALID_ARGUMENT) {
            f.fail("W18", "ReleaseWorker with a holder_id of 65 characters: "
                    + (badRelease.answer() == null ? status(badRelease.status()) : "OK") + ", not INVALID_ARGUMENT");
        }
        if (!f.failed("W18")) {
            f.pass("W18", "a holder stream (holder_id of 64 characters) answered as any watch; holder ids of 65"
                    + " characters and with a space refused with INVALID_ARGUMENT, on a stream and on ReleaseWorker");
        }
    }

    /** When {@link #tick} has something to do next, in {@link System#nanoTime()}; {@link Long#MAX_VALUE}: nothing. */
    long dueAt() {
        if (implemented != Boolean.TRUE || drainSeenAt == 0 || lastReleaseAt != 0) {
            return Long.MAX_VALUE;
        }
        if (firstReleaseAt == 0) {
            return drainSeenAt + (c.expectDrain ? c.hold.toNanos() : 0);
        }
        return countdownAt != 0 ? countdownAt : firstReleaseAt + timeoutNanos;
    }

    /**
     * In a drain: holds, then releases the holder stream's id, then (once the count went down) the
     * streams' id. Without {@code expectDrain} (a restart) it lets go at once, as a coordinator would.
     */
    void tick(long now) {
        if (now < dueAt()) {
            return;
        }
        if (firstReleaseAt == 0) {
            if (stoppedBy(now) != 0) {
                return; // the worker stopped while held: W19 says so at the end
            }
            // A stranger's release first: refused, it must leave the worker held (W19 says so if it stops).
            strangerRelease(holder.last.getInstanceId(), "while DRAINING");
            firstReleaseAt = System.nanoTime(); // sent: the worker may stop before the answer is back
            Release r = run.calls().release(channel, holderId, holder.last.getInstanceId());
            if (r.answer() == null) {
                f.fail("W20", "ReleaseWorker while DRAINING failed: " + status(r.status()));
                lastReleaseAt = firstReleaseAt;
                return;
            }
            firstReleaseLeft = r.answer().getHolders();
            releases = "the holder stream's id released " + run.at(firstReleaseAt) + " (answered holders "
                    + firstReleaseLeft + ")";
            if (holdersBefore >= 0 && Integer.compareUnsigned(firstReleaseLeft, holdersBefore) >= 0) {
                f.fail("W21", "ReleaseWorker of the holder stream's id answered holders " + firstReleaseLeft
                        + ", where the DRAINING answer before it said " + holdersBefore);
            }
            if (!c.expectDrain) {
                lastReleaseAt = firstReleaseAt;
            } else {
                watchAnew();
            }
            return;
        }
        if (stoppedBy(now) != 0) {
            return; // stopped while the streams' id still held it: W19 says so at the end
        }
        lastReleaseAt = System.nanoTime();
        Release r = run.calls().release(channel, streamsId, holder.last.getInstanceId());
        if (r.answer() == null) {
            f.fail("W20", "ReleaseWorker of the streams' id while DRAINING failed: " + status(r.status()));
        } else {
            releases += "; the streams' id " + run.at(lastReleaseAt) + " (answered holders " + r.answer().getHolders() + ")";
        }
    }

    /**
     * W19: a coordinator that watches anew after its release is still released. A second stream of
     * the holder stream's id must not be counted; its first answer is waited for at most the call timeout.
     */
    private void watchAnew() {
        BlockingQueue<Event> first = new LinkedBlockingQueue<>();
        WatchedStream again = WatchedStream.open(channel, "anew", 0, holderId, c.callTimeout, first);
        try {
            Event e = first.poll(timeoutNanos, TimeUnit.NANOSECONDS);
            if (e != null && e.answer() != null) {
                WorkerInfoResponse r = e.answer();
                run.every().check("the released holder's stream opened anew", r);
                if (r.getState() == ServingState.DRAINING
                        && Integer.compareUnsigned(r.getHolders(), firstReleaseLeft) > 0) {
                    f.fail("W19", "a stream opened anew with the released holder id counted again: holders "
                            + r.getHolders() + " after the release answered " + firstReleaseLeft);
                } else {
                    anew = "; a stream opened anew with the released id was not counted (holders " + r.getHolders() + ")";
                }
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        } finally {
            again.cancel();
        }
    }

    /** The kit's holder streams that hold the worker now, as far as the kit knows (W21's lower bound). */
    private int kitHolding() {
        if (implemented != Boolean.TRUE || run.beating() == null || holder.ended() || run.beating().ended()
                || run.quiet().ended()) {
            return 0;
        }
        int n = firstReleaseAt == 0 ? 1 : 0;
        return n + (c.expectDrain && lastReleaseAt == 0 ? 2 : 0);
    }

    /** The first sign, before {@code now}, that the worker stopped: a kit stream ended or a new call refused; 0: none. */
    private long stoppedBy(long now) {
        long first = Long.MAX_VALUE;
        for (WatchedStream s : new WatchedStream[] {holder, run.beating(), run.quiet()}) {
            if (s != null && s.ended()) {
                first = Math.min(first, s.endAt);
            }
        }
        if (run.goneAt() != 0) {
            first = Math.min(first, run.goneAt());
        }
        return first <= now ? first : 0;
    }

    /** The word on W19, W21 and W22 once the run has watched (W18 and W20 were said by {@link #probe}). */
    void finish() {
        if (implemented != Boolean.TRUE) {
            return;
        }
        String onlyInDrain = "shown only while the worker drains, which is watched only when expected"
                + " (expectDrain, --expect-drain)";
        if (!c.expectDrain || drainSeenAt == 0) {
            for (String rule : List.of("W19", "W21", "W22")) {
                f.notChecked(rule, c.expectDrain ? "DRAINING was never seen" : onlyInDrain);
            }
            return;
        }
        long stopped = stoppedBy(Long.MAX_VALUE);
        if (firstReleaseAt == 0 && stopped == 0) {
            for (String rule : List.of("W19", "W21", "W22")) {
                f.notChecked(rule, "the run ended within the kit's hold of " + c.hold.toMillis() + " ms");
            }
            return;
        }
        if (stopped != 0 && (firstReleaseAt == 0 || lastReleaseAt == 0 || stopped < lastReleaseAt)) {
            f.fail("W19", "the worker stopped " + ms(stopped - drainSeenAt) + " after DRAINING was seen while the kit's"
                    + " holder streams still held it (" + (firstReleaseAt == 0 ? "no release sent yet" : releases)
                    + "; unless its shutdown-grace is shorter than the kit's hold of " + c.hold.toMillis() + " ms)");
            f.notChecked("W22", "the worker stopped before the kit let go (W19)");
        } else {
            f.pass("W19", "held " + ms(firstReleaseAt - drainSeenAt) + " after DRAINING by 3 holder streams under 2 ids: WorkerInfo answered"
                    + " and every stream stayed open until the kit let go (" + releases + ")" + anew);
        }
        if (firstReleaseAt != 0 && countdownAt == 0 && !f.failed("W21")) {
            f.fail("W21", "after the holder stream's id was released (answered holders " + firstReleaseLeft
                    + "), no answer with fewer than " + holdersBefore + " holders was pushed within " + ms(timeoutNanos));
        } else if (countdownAt != 0) {
            f.pass("W21", run.every().drainingAnswers() + " DRAINING answers, each saying holders at least the kit's"
                    + " own; " + countdown);
        }
        if (f.failed("W19")) {
            return;
        }
        WatchedStream beating = run.beating();
        if (!beating.ended()) {
            f.fail("W22", "the stream was still open " + ms(System.nanoTime() - lastReleaseAt) + " after the kit's last"
                    + " release (" + releases + ")");
        } else if (beating.endAt - lastReleaseAt > timeoutNanos) {
            f.fail("W22", "the stream ended " + ms(beating.endAt - lastReleaseAt) + " after the kit's last release,"
                    + " more than the call timeout " + ms(timeoutNanos) + ": a quiet period after the last holder let go?");
        } else {
            f.pass("W22", "the stream ended " + ms(Math.max(0, beating.endAt - lastReleaseAt)) + " after the kit's last"
                    + " release" + (run.goneAt() != 0 ? ", new calls refused from " + run.since(run.goneAt()) : "")
                    + " (every watcher the kit brought held it; the worker's other watchers are not visible)");
        }
    }
}
