package dev.rollcall.conformance;

import static dev.rollcall.conformance.Answers.describe;
import static dev.rollcall.conformance.Answers.quoted;
import static dev.rollcall.conformance.Answers.same;
import static dev.rollcall.conformance.Answers.status;

import dev.rollcall.protocol.internal.AnswerCheck;
import dev.rollcall.protocol.v1.ServingState;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import io.grpc.Status;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntSupplier;

/**
 * The checks every answer of a run gets, unary or streamed: W3 (one instance id per process), W4
 * (one version), W9 (a revision in every answer or in none, one answer per revision), W12 (a known
 * state), W14 (the bounds a coordinator checks, with the coordinator's own check), W21 ({@code holders} 0 unless draining, and
 * while draining at least the kit's own holder streams that still hold the worker). Confined to the run's thread.
 */
final class EveryAnswer {

    private final Findings f;
    private final Set<String> states = new TreeSet<>();
    private String instanceId;
    private String version;
    private int count;
    /** Where the process first sent revision 0 (none), and a revision; null until then. */
    private String firstWithout;
    private String firstWith;
    private IntSupplier kitHolding = () -> 0;
    private int drainingAnswers;

    EveryAnswer(Findings findings) {
        this.f = findings;
    }

    /** How many holder streams of the kit hold the worker now: a DRAINING answer says at least that many (W21). */
    void kitHolding(IntSupplier holding) {
        this.kitHolding = holding;
    }

    /** How many answers said DRAINING. */
    int drainingAnswers() {
        return drainingAnswers;
    }

    /** A unary answer: {@link #check} and W10's "the unary answer says 0". */
    void unary(String where, WorkerInfoResponse r) {
        check(where, r);
        if (r.getHeartbeatMillis() != 0) {
            f.fail("W10", where + ": heartbeat_millis " + Integer.toUnsignedString(r.getHeartbeatMillis())
                    + " in a unary answer, which says 0");
        }
    }

    void check(String where, WorkerInfoResponse r) {
        count++;
        String problem = AnswerCheck.problem(r);
        if (problem != null) {
            f.fail("W14", where + ": " + problem);
        }
        String id = r.getInstanceId();
        if (id.isEmpty()) {
            f.fail("W3", where + ": the instance id is empty");
        }
        if (instanceId == null) {
            instanceId = id;
        } else if (!id.equals(instanceId)) {
            f.fail("W3", where + ": instance id " + quoted(id) + " where the process said " + quoted(instanceId) + " before");
        }
        if (version == null) {
            version = r.getVersion();
        } else if (!r.getVersion().equals(version)) {
            f.fail("W4", where + ": version " + quoted(r.getVersion()) + " where the process said " + quoted(version) + " before");
        }
        if (r.getStateValue() < 0 || r.getStateValue() > 2) {
            f.fail("W12", where + ": state number " + r.getStateValue() + ", which v1 coordinators read as NOT_SERVING");
        } else {
            states.add(Answers.state(r));
        }
        int holders = r.getHolders();
        if (r.getState() != ServingState.DRAINING && holders != 0) {
            f.fail("W21", where + ": holders " + Integer.toUnsignedString(holders) + " while " + Answers.state(r)
                    + " (0 when not draining)");
        } else if (r.getState() == ServingState.DRAINING) {
            drainingAnswers++;
            int kit = kitHolding.getAsInt();
            if (Integer.compareUnsigned(holders, kit) < 0) {
                f.fail("W21", where + ": DRAINING with holders " + holders + " while " + kit
                        + " of the kit's holder streams held the worker");
            }
        }
        revision(where, r.getRevision());
    }

    /**
     * W9: a process that never sends a revision does not implement it (recommended); one that sends
     * revisions in some answers and 0 in others breaks it, since coordinators order its answers by
     * revision only while it sends them.
     */
    private void revision(String where, long revision) {
        if (revision == 0 && firstWithout == null) {
            firstWithout = where;
            if (firstWith == null) {
                f.notImplemented("W9", "revision 0 (not sent) in " + where);
            }
        } else if (revision != 0 && firstWith == null) {
            firstWith = where;
        }
        if (firstWithout != null && firstWith != null) {
            f.fail("W9", "revision 0 (not sent) in " + firstWithout + ", a revision in " + firstWith
                    + ": a process sends one in every answer or in none");
        }
    }

    /** W9: one process never sends two different answers under one revision. */
    void sameRevisionSameAnswer(String where, WorkerInfoResponse before, WorkerInfoResponse after) {
        if (after.getRevision() != 0 && after.getRevision() == before.getRevision() && !same(before, after)
                && after.getInstanceId().equals(before.getInstanceId())) {
            f.fail("W9", where + ": two answers under revision " + Long.toUnsignedString(after.getRevision()) + ": "
                    + describe(before) + " and " + describe(after));
        }
    }

    /** W14: gRPC refused an answer over the coordinator's 1 MiB. */
    void tooLarge(String where, Status s) {
        if (Answers.tooLarge(s)) {
            f.fail("W14", where + ": an answer over " + Calls.MAX_RESPONSE_BYTES + " bytes on the wire ("
                    + status(s) + ")");
        }
    }

    /** A restart was seen: the next answer starts a new process's identity. Returns the old instance id. */
    String newProcess() {
        String old = instanceId;
        instanceId = null;
        version = null;
        firstWithout = null;
        firstWith = null;
        return old;
    }

    /** The current process's instance id, or null before the first answer. */
    String instanceId() {
        return instanceId;
    }

    String version() {
        return version;
    }

    int count() {
        return count;
    }

    Set<String> states() {
        return states;
    }
}
