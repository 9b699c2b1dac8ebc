package dev.rollcall.conformance;

import static dev.rollcall.conformance.Answers.ms;
import static dev.rollcall.conformance.Answers.quoted;
import static dev.rollcall.conformance.Answers.seconds;
import static dev.rollcall.conformance.Answers.status;

import io.grpc.Status;
import java.util.List;

/**
 * The word on each rule at two moments of a run: when the streams have said (or not said) their
 * first answers, and once the run has watched. What passed says what was seen, what could not be
 * seen says why; failures recorded during the run win over anything said here.
 */
final class Verdicts {

    private Verdicts() {
    }

    static void finish(ConformanceRun run, long watchedNanos) {
        Findings f = run.findings();
        WorkerConformance c = run.settings();
        EveryAnswer every = run.every();
        f.pass("W2", run.calls().count() + " WorkerInfo calls answered, the slowest in " + ms(run.calls().slowest())
                + " (deadline " + c.callTimeout.toMillis() + " ms; side effects are not visible from outside)");
        if (c.expectRestart) {
            restart(run, f, c);
        } else {
            f.pass("W3", quoted(every.instanceId()) + " in all " + every.count() + " answers (that it is new on every"
                    + " start is seen only when a restart is watched: expectRestart, --expect-restart)");
        }
        f.pass("W4", quoted(every.version()) + " in all answers of the process");
        // A worker without revisions was found not to implement W9 by EveryAnswer, which wins over this pass.
        f.pass("W9", "every answer had a revision; none lower than one before it, none reused for another answer");
        f.pass("W12", "states seen: " + String.join(", ", every.states()));
        f.pass("W14", every.count() + " answers within every bound of docs/protocol.md");
        f.notChecked("W11", "needs a coordinator that stops reading (HTTP/2 flow control), which this kit does not do");
        WatchedStream beating = run.beating();
        if (beating == null || !beating.answered() || !run.quiet().answered()) {
            drain(run, f, c);
            return; // the rules of the stream were settled by what it did first
        }
        int changes = beating.changes;
        if (changes == 0 && run.pushesConfirmed() == 0) {
            f.notChecked("W6", "the worker did not change while watched (" + seconds(watchedNanos)
                    + "), so there was nothing to push: make it change while it is watched (a drain: --expect-drain)");
        } else {
            f.pass("W6", changes + " change(s) pushed; every change WorkerInfo showed was on the stream "
                    + (run.pushesConfirmed() == 0 ? "already" : "within " + ms(run.slowestPush()))
                    + "; never an older answer after a newer one");
        }
        f.pass("W7", beating.overflowed() ? "open until the kit cut it off (W6)"
                : beating.ended() ? "open until " + run.since(beating.endAt) + ", when it ended with "
                + status(beating.end) + (run.drainPushedAt() != 0 ? " after the drain" : " with the restart")
                : "open for the whole watch (" + seconds(watchedNanos) + ")");
        for (WatchedStream s : new WatchedStream[] {beating, run.quiet()}) {
            if (s.overflowed()) {
                f.fail("W6", s.overflowFinding());
            }
        }
        int granted = beating.grantedMillis;
        // A heartbeat may come a little early, not many times per interval: at most twice as often as granted.
        long allowedRepeats = granted <= 0 ? 0 : 2 * watchedNanos / (granted * 1_000_000L) + 2;
        if (granted > 0 && beating.repeats > allowedRepeats) {
            f.fail("W10", "the heartbeat stream repeated its answer " + beating.repeats + " times in "
                    + seconds(watchedNanos) + " with " + granted + " ms granted");
        }
        if (granted <= 0) {
            f.notChecked("W10", "no heartbeat was granted");
        } else if (beating.count < 2 || watchedNanos < granted * 1_000_000L) {
            f.notChecked("W10", "watched " + seconds(watchedNanos) + ", not longer than the " + granted + " ms granted");
        } else {
            f.pass("W10", "asked " + beating.askedHeartbeatMillis + " ms, granted " + granted + " ms, said in all "
                    + beating.count + " answers; longest silence " + ms(beating.longestGapNanos) + " over "
                    + seconds(watchedNanos) + "; the stream that asked for none got only changes");
        }
        drain(run, f, c);
    }

    /** W5, W8, W10 (grants), W16 on what the two streams said first; false when there is no stream to watch. */
    static boolean firstAnswers(ConformanceRun run) {
        Findings f = run.findings();
        EveryAnswer every = run.every();
        WatchedStream beating = run.beating();
        WatchedStream quiet = run.quiet();
        for (WatchedStream s : new WatchedStream[] {beating, quiet}) {
            if (s.answered()) {
                continue;
            }
            if (s.ended() && s.end.getCode() == Status.Code.UNIMPLEMENTED && s == beating) {
                f.notImplemented("W8", "WatchWorkerInfo answered UNIMPLEMENTED");
                for (String rule : List.of("W5", "W6", "W7", "W10", "W11", "W12", "W13", "W16", "W18", "W19", "W20",
                        "W21", "W22")) {
                    f.notChecked(rule, "the stream is not served (W8)");
                }
                return false;
            }
            String what = s.ended() ? "ended with " + status(s.end) + " before its first answer"
                    : "did not answer within " + ms(run.settings().callTimeout.toNanos());
            if (s == quiet && beating.answered()) {
                f.fail("W16", "a second WatchWorkerInfo on the connection of the first " + what);
                continue;
            }
            f.fail("W5", "the " + s.name + " stream " + what);
            if (s.ended() && s.end.getCode() != Status.Code.DEADLINE_EXCEEDED) {
                f.fail("W8", "WatchWorkerInfo ended with " + status(s.end) + ": neither a stream nor UNIMPLEMENTED");
                every.tooLarge("the " + s.name + " stream", s.end);
            }
            for (String rule : List.of("W6", "W7", "W10", "W11", "W13", "W18", "W19", "W20", "W21", "W22")) {
                f.notChecked(rule, "the stream gave no answer to watch");
            }
            return false;
        }
        f.pass("W8", "WatchWorkerInfo is served");
        f.pass("W16", "two WatchWorkerInfo streams on one connection both answered (the other limits of W16 are"
                + " not probed: they would load the worker)");
        return true;
    }

    private static void drain(ConformanceRun run, Findings f, WorkerConformance c) {
        if (!c.expectDrain) {
            f.notChecked("W13", "a drain is watched only when expected (expectDrain, --expect-drain)");
            return;
        }
        if (f.failed("W13") || run.beating() == null || !run.beating().answered()) {
            return;
        }
        WatchedStream beating = run.beating();
        long pushed = run.drainPushedAt();
        if (pushed == 0) {
            f.fail("W13", "waited " + c.waitFor.toSeconds() + " s: DRAINING was never pushed on the stream");
        } else if (run.goneAt() == 0 && c.expectRestart && run.restartSeenAt() > pushed) {
            // A successor took the address (a restart in place; an SO_REUSEPORT hot restart or a
            // balancer even before the old process ended): new calls reach it, not the draining one,
            // and there may never be a moment when the port refuses them to see. The kit's watch
            // ends with the restart, so the old stream's end is reported, not awaited.
            f.pass("W13", "DRAINING pushed " + run.at(pushed) + "; new calls answered by the successor from "
                    + run.since(run.restartSeenAt()) + " (the draining process's stream "
                    + (beating.ended() ? "ended " + ms(beating.endAt - pushed) + " after the push, "
                    + status(beating.end) : "still open when the successor answered") + ")");
        } else if (!beating.ended()) {
            f.fail("W13", "DRAINING pushed " + run.at(pushed) + ", but the stream was still open "
                    + c.waitFor.toSeconds() + " s after the wait began");
        } else if (run.goneAt() == 0) {
            f.fail("W13", "DRAINING pushed " + run.at(pushed) + ", the stream ended " + run.at(beating.endAt)
                    + ", but the worker still answered new calls when the wait ran out");
        } else {
            f.pass("W13", "DRAINING pushed " + run.at(pushed) + "; the stream ended " + ms(beating.endAt - pushed)
                    + " later (" + status(beating.end) + "); new calls refused from " + run.since(run.goneAt()));
        }
    }

    private static void restart(ConformanceRun run, Findings f, WorkerConformance c) {
        if (run.restartSeenAt() == 0) {
            f.fail("W3", "waited " + c.waitFor.toSeconds() + " s for a restart: no other instance id answered at "
                    + c.target() + " (the last said " + quoted(run.every().instanceId()) + ")");
            return;
        }
        f.pass("W3", quoted(run.restartedFrom()) + " for the whole first process; " + quoted(run.every().instanceId())
                + " after the restart " + run.at(run.restartSeenAt()) + ", stable over another connection");
    }
}
