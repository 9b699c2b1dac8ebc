package dev.rollcall.conformance;

import static dev.rollcall.conformance.Answers.describe;
import static dev.rollcall.conformance.Answers.ms;
import static dev.rollcall.conformance.Answers.same;
import static dev.rollcall.conformance.Answers.seconds;
import static dev.rollcall.conformance.Answers.status;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoRequest;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import dev.rollcall.conformance.Calls.Unary;
import dev.rollcall.conformance.WatchedStream.Event;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of {@link WorkerConformance#check()}: the unary checks, then two streams watched while
 * {@code WorkerInfo} is polled, then the verdicts. Confined to the calling thread except for what
 * {@link WatchedStream} hands over through its queue.
 */
final class ConformanceRun {

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final WorkerInfoRequest REQUEST = WorkerInfoRequest.getDefaultInstance();
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final WorkerConformance c;
    private final Findings f;
    private final long t0 = System.nanoTime();
    private final long timeoutNanos;
    private final Calls calls;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final EveryAnswer every;
    private final ExactDrain exact;

    private WorkerInfoResponse latestUnary;
    private ManagedChannel pollChannel;
    private WatchedStream beating;
    private WatchedStream quiet;
    /** A change WorkerInfo showed that the heartbeat stream has not pushed yet (W6), and since when. */
    private WorkerInfoResponse pending;
    private long pendingSince;
    private WorkerInfoResponse lastUnpushed;
    private int pushesConfirmed;
    private long slowestPush;
    private long drainPushedAt;
    private long goneAt;
    private long restartSeenAt;
    private long watchedNanos;
    /** Whether the operator has been told to act (after the steady watch): from then on an end or a refusal is expected. */
    private boolean waiting;
    private String restartedFrom;

    ConformanceRun(WorkerConformance conformance) {
        this.c = conformance;
        this.f = new Findings(conformance.strict);
        this.every = new EveryAnswer(f);
        this.timeoutNanos = conformance.callTimeout.toNanos();
        this.calls = new Calls(conformance, RUNS.incrementAndGet());
        this.exact = new ExactDrain(this);
    }

    ConformanceReport run() {
        try {
            if (unaryChecks()) {
                streamChecks();
                Verdicts.finish(this, watchedNanos);
                exact.finish();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Findings.RULES.forEach(rule -> f.notChecked(rule, "interrupted before it was observed"));
        } finally {
            for (WatchedStream s : new WatchedStream[] {beating, quiet}) {
                if (s != null) {
                    s.cancel();
                }
            }
            exact.cancel();
            calls.close();
        }
        return f.report(c.target());
    }

    // ---- W1, W2, W3, W4, W14, W15, W17: WorkerInfo over two connections, reflection ----

    private boolean unaryChecks() throws InterruptedException {
        ManagedChannel first = calls.open();
        ManagedChannel second = calls.open();
        calls.connect(first);
        Unary u1 = calls.unary(first, REQUEST);
        if (u1.answer() == null) {
            f.fail("W1", "WorkerInfo did not answer: " + status(u1.status()));
            every.tooLarge("WorkerInfo", u1.status());
            Findings.RULES.forEach(rule -> f.notChecked(rule, "nothing more to check: WorkerInfo did not answer"));
            return false;
        }
        f.pass("W1", "WorkerInfo answered in " + ms(u1.nanos()) + ": " + describe(u1.answer())
                + " (whether the data service shares this port and process is not visible from outside)");
        every.unary("WorkerInfo call 1", u1.answer());
        WorkerInfoResponse previous = u1.answer();
        ManagedChannel[] next = {second, first};
        for (int i = 0; i < next.length; i++) {
            Unary u = calls.unary(next[i], REQUEST);
            if (u.answer() == null) {
                f.fail("W2", "WorkerInfo call " + (i + 2) + " failed: " + status(u.status()));
                continue;
            }
            every.unary("WorkerInfo call " + (i + 2) + (i == 0 ? " (another connection)" : ""), u.answer());
            every.sameRevisionSameAnswer("WorkerInfo call " + (i + 2), previous, u.answer());
            previous = u.answer();
        }
        WorkerInfoRequest unknown = REQUEST.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(1000, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                .addField(1001, UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFromUtf8("from a newer coordinator")).build())
                .build()).build();
        Unary u4 = calls.unary(second, unknown);
        if (u4.answer() == null) {
            f.fail("W15", "a request with fields 1000 and 1001 (unknown to v1) was refused: " + status(u4.status()));
        } else {
            f.pass("W15", "a request with fields 1000 and 1001 (unknown to v1) was answered");
            every.unary("WorkerInfo call with unknown fields", u4.answer());
            previous = u4.answer();
        }
        latestUnary = previous;
        Reflection.check(first, timeoutNanos, f);
        return true;
    }

    // ---- W5 to W13, W16, W18 to W22: two streams on one connection and a holder stream, WorkerInfo polled beside them ----

    private void streamChecks() throws InterruptedException {
        ManagedChannel streams = calls.open();
        pollChannel = calls.open();
        boolean expecting = c.expectDrain || c.expectRestart;
        Duration deadline = c.watch.plus(expecting ? c.waitFor : Duration.ZERO).plus(c.callTimeout.multipliedBy(3));
        String holder = exact.streamsHolderId(); // in a drain every watcher the kit brings holds the worker
        beating = WatchedStream.open(streams, "heartbeat", (int) c.heartbeat.toMillis(), holder, deadline, events);
        quiet = WatchedStream.open(streams, "no-heartbeat", 0, holder, deadline, events);
        exact.open(calls, deadline, events);
        long firstBy = System.nanoTime() + timeoutNanos;
        while (!(settled(beating) && settled(quiet) && exact.settled()) && System.nanoTime() < firstBy) {
            Event e = events.poll(firstBy - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (e != null) {
                handle(e);
            }
        }
        if (!Verdicts.firstAnswers(this)) {
            return;
        }
        exact.probe();
        long watchStart = System.nanoTime();
        long end = watchStart + c.watch.toNanos();
        long nextPoll = watchStart;
        while (!(waiting && expectationsMet())) {
            long now = System.nanoTime();
            if (expecting && !waiting && now >= end) {
                // Watched long enough to judge the steady state: now the operator's turn.
                waiting = true;
                c.onWaiting.accept(c.expectDrain ? WorkerConformance.Expectation.DRAIN : WorkerConformance.Expectation.RESTART);
                end = System.nanoTime() + c.waitFor.toNanos();
                continue;
            }
            if (now >= end && (pending == null || beating.ended())) {
                break; // a change seen late in the watch still gets its call timeout to reach the stream
            }
            if (now >= nextPoll) {
                poll();
                nextPoll = System.nanoTime() + POLL_NANOS;
            }
            long until = Math.min(exact.dueAt(), Math.min(nextPoll, Math.max(end, pendingSince + timeoutNanos + 1)));
            Event e = events.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (e != null) {
                handle(e);
            }
            checkPending(System.nanoTime());
            exact.tick(System.nanoTime());
        }
        watchedNanos = System.nanoTime() - watchStart;
    }

    private static boolean settled(WatchedStream s) {
        return s.answered() || s.ended();
    }

    private void handle(Event e) {
        WatchedStream s = e.stream();
        s.taken(e);
        if (s.endedByKit(e)) { // not the worker's end of the stream (W7, W18): W6 says why
            f.fail("W6", s.overflowFinding());
            return;
        }
        if (exact.owns(s)) {
            exact.handle(e);
            return;
        }
        if (e.answer() == null) {
            ended(s, e.end(), e.atNanos());
            return;
        }
        WorkerInfoResponse r = e.answer();
        s.count++;
        String where = "the " + s.name + " stream's answer " + s.count + " (" + at(e.atNanos()) + ")";
        if (restartSeenAt != 0 && r.getInstanceId().equals(restartedFrom)) {
            return; // the old process, still talking while its successor answers
        }
        every.check(where, r);
        if (s.count == 1) {
            first(s, r, e.atNanos());
        } else {
            next(s, where, r, e.atNanos());
        }
        s.last = r;
        s.lastAt = e.atNanos();
        exact.seen(r, e.atNanos());
        if (s == beating) {
            checkPending(e.atNanos());
        }
    }

    private void first(WatchedStream s, WorkerInfoResponse r, long at) {
        s.grantedMillis = r.getHeartbeatMillis();
        if (s.askedHeartbeatMillis > 0 && s.grantedMillis == 0) {
            f.notImplemented("W10", "the " + s.name + " stream asked for " + s.askedHeartbeatMillis + " ms and was granted 0");
        } else if (s.askedHeartbeatMillis == 0 && s.grantedMillis != 0) {
            f.fail("W10", "the " + s.name + " stream asked for none and was granted " + Integer.toUnsignedString(s.grantedMillis) + " ms");
        }
        if (same(r, latestUnary)) {
            f.pass("W5", "the first answers came within " + ms(at - s.openedAt) + " and equal WorkerInfo: " + describe(r));
            return;
        }
        Unary after = calls.unary(pollChannel, REQUEST); // a change between the two calls is not a fault
        if (after.answer() != null && same(r, after.answer())) {
            latestUnary = after.answer();
            return;
        }
        f.fail("W5", "the " + s.name + " stream's first answer: " + describe(r) + "; WorkerInfo before: "
                + describe(latestUnary) + (after.answer() == null ? "" : "; after: " + describe(after.answer())));
    }

    private void next(WatchedStream s, String where, WorkerInfoResponse r, long at) {
        long gap = at - s.lastAt;
        s.longestGapNanos = Math.max(s.longestGapNanos, gap);
        if (s.grantedMillis > 0 && gap > TimeUnit.MILLISECONDS.toNanos(s.grantedMillis) + c.heartbeatSlack.toNanos()) {
            f.fail("W10", where + ": silent for " + ms(gap) + " before it, " + s.grantedMillis + " ms granted");
        }
        if (r.getHeartbeatMillis() != s.grantedMillis) {
            f.fail("W10", where + ": heartbeat_millis " + Integer.toUnsignedString(r.getHeartbeatMillis()) + ", "
                    + s.grantedMillis + " in the stream's first answer");
        }
        long rev = r.getRevision();
        long before = s.last.getRevision();
        if (rev != 0 && before != 0 && Long.compareUnsigned(rev, before) < 0) {
            String back = where + ": revision " + Long.toUnsignedString(rev) + " after revision "
                    + Long.toUnsignedString(before);
            f.fail("W6", back + ", an older answer after a newer one");
            f.fail("W9", back + ": revisions never go down");
        }
        if (same(r, s.last)) {
            s.repeats++;
            if (s.grantedMillis == 0) {
                f.fail("W10", where + ": the same answer again (revision " + Long.toUnsignedString(rev)
                        + ") on a stream that asked for no heartbeat: send only changes");
            }
            return;
        }
        every.sameRevisionSameAnswer(where, s.last, r);
        s.changes++;
        if (s == beating && r.getState() == ServingState.DRAINING
                && s.last.getState() != ServingState.DRAINING && drainPushedAt == 0) {
            drainPushedAt = at;
        }
    }

    private void ended(WatchedStream s, Status end, long at) {
        if (s.ended()) {
            return;
        }
        s.end = end;
        s.endAt = at;
        if (!s.answered()) {
            return; // firstAnswers() judges it
        }
        every.tooLarge("the " + s.name + " stream", end);
        if (restartSeenAt != 0 || (waiting && c.expectRestart && !c.expectDrain)) {
            return; // the process is being replaced
        }
        if (drainPushedAt == 0) {
            f.fail("W7", "the " + s.name + " stream ended " + at(at) + " with " + status(end) + " while the worker was "
                    + Answers.state(s.last) + (c.expectDrain ? ", before DRAINING was pushed" : ""));
        }
    }

    /** One WorkerInfo beside the streams: W2, W6 (a change not pushed), W9 (a revision below a push), the drain and the restart. */
    private void poll() {
        boolean fresh = drainPushedAt != 0 || goneAt != 0 || (waiting && c.expectRestart && beating.ended());
        ManagedChannel ch = fresh ? calls.open() : pollChannel;
        WorkerInfoResponse pushedBefore = beating.last;
        long startedAt = System.nanoTime();
        Unary u = calls.unary(ch, REQUEST);
        if (fresh) {
            calls.close(ch);
        }
        if (u.answer() == null) {
            if (drainPushedAt != 0 || (waiting && c.expectRestart)) {
                if (goneAt == 0 && u.status().getCode() == Status.Code.UNAVAILABLE) {
                    goneAt = startedAt;
                }
            } else if (waiting && c.expectDrain) {
                if (goneAt == 0) {
                    goneAt = startedAt;
                    f.fail("W13", "the worker stopped answering " + at(startedAt) + " (" + status(u.status())
                            + ") before DRAINING was pushed");
                }
            } else {
                f.fail("W2", "WorkerInfo failed " + at(startedAt) + " while the worker was up: " + status(u.status()));
            }
            return;
        }
        WorkerInfoResponse r = u.answer();
        if (waiting && c.expectRestart && restartSeenAt == 0 && every.instanceId() != null
                && !r.getInstanceId().equals(every.instanceId())) {
            restarted(r, startedAt);
            return;
        }
        every.unary("WorkerInfo " + at(startedAt), r);
        latestUnary = r;
        if (restartSeenAt != 0 || pushedBefore == null || beating.ended()) {
            return;
        }
        long rev = r.getRevision();
        if (rev != 0 && Long.compareUnsigned(rev, pushedBefore.getRevision()) < 0) {
            f.fail("W9", "WorkerInfo said revision " + Long.toUnsignedString(rev) + " " + at(startedAt)
                    + ", after the stream had pushed revision " + Long.toUnsignedString(pushedBefore.getRevision()));
        }
        every.sameRevisionSameAnswer("WorkerInfo " + at(startedAt) + " and the stream", pushedBefore, r);
        WorkerInfoResponse pushed = beating.last;
        boolean newer = rev == 0 || Long.compareUnsigned(rev, pushed.getRevision()) > 0;
        if (pending == null && newer && !same(r, pushed) && (lastUnpushed == null || !same(r, lastUnpushed))) {
            pending = r;
            pendingSince = startedAt;
        }
    }

    private void restarted(WorkerInfoResponse r, long at) {
        restartSeenAt = at;
        restartedFrom = every.newProcess();
        every.unary("WorkerInfo after the restart", r);
        ManagedChannel again = calls.open();
        Unary u = calls.unary(again, REQUEST);
        if (u.answer() != null) {
            every.unary("WorkerInfo after the restart, over another connection", u.answer());
        }
    }

    /** W6 and W12: a change WorkerInfo showed must be on the heartbeat stream within the call timeout. */
    private void checkPending(long now) {
        if (pending == null) {
            return;
        }
        WorkerInfoResponse pushed = beating.last;
        long rev = pending.getRevision();
        if (same(pushed, pending) || (rev != 0 && Long.compareUnsigned(pushed.getRevision(), rev) >= 0)) {
            pushesConfirmed++;
            slowestPush = Math.max(slowestPush, now - pendingSince);
            pending = null;
            return;
        }
        if (now - pendingSince > timeoutNanos && !beating.ended()) {
            String seen = "WorkerInfo said " + describe(pending) + " " + at(pendingSince) + "; " + ms(timeoutNanos)
                    + " later the stream's newest answer was still " + describe(pushed);
            f.fail("W6", seen);
            if (pending.getStateValue() != pushed.getStateValue()) {
                f.fail("W12", "the change to " + Answers.state(pending) + " was not pushed");
            }
            lastUnpushed = pending;
            pending = null;
        }
    }

    private boolean expectationsMet() {
        boolean drained = drainPushedAt != 0 && beating.ended() && goneAt != 0;
        if (c.expectRestart) {
            return restartSeenAt != 0 && (!c.expectDrain || drainPushedAt != 0);
        }
        return c.expectDrain && drained;
    }

    // ---- plumbing ----

    /** {@code at +1.2 s} since the run started. */
    String at(long nanos) {
        return "at " + since(nanos);
    }

    /** {@code +1.2 s} since the run started. */
    String since(long nanos) {
        return "+" + seconds(nanos - t0);
    }

    // ---- for Verdicts ----

    Findings findings() {
        return f;
    }

    WorkerConformance settings() {
        return c;
    }

    EveryAnswer every() {
        return every;
    }

    WatchedStream beating() {
        return beating;
    }

    WatchedStream quiet() {
        return quiet;
    }

    String restartedFrom() {
        return restartedFrom;
    }

    Calls calls() {
        return calls;
    }

    int pushesConfirmed() {
        return pushesConfirmed;
    }

    long slowestPush() {
        return slowestPush;
    }

    long drainPushedAt() {
        return drainPushedAt;
    }

    long goneAt() {
        return goneAt;
    }

    long restartSeenAt() {
        return restartSeenAt;
    }

    boolean waiting() {
        return waiting;
    }
}
