package dev.rollcall.conformance;

/**
 * The rules of {@code docs/protocol.md}, one definition each, in the page's order: what the rule asks,
 * and whether it is required or recommended. A rule is recommended when coordinators tolerate its
 * absence (as they tolerate no stream, no revision, no heartbeat): a worker written before the rule
 * was added keeps working, and {@link #lost} says what coordinators cannot do for it. The page's table
 * of rules says the same (a test holds them together). Only absence is tolerated: a recommended rule
 * implemented wrongly fails like any other.
 */
enum Rule {
    W1("serves rollcall.v1.WorkerService"),
    W2("WorkerInfo answers at once, the same between changes"),
    W3("instance id new per process, stable within it"),
    W4("version fixed for the process"),
    W5("the stream's first answer is the unary answer"),
    W6("one push per change, newest only"),
    W7("the stream stays open"),
    W8("the stream is served, or UNIMPLEMENTED",
            "coordinators fall back to WorkerInfo, see a drain only at the next probe and a silent host only"
                    + " through HTTP/2 keepalive"),
    W9("revisions grow, one answer per revision",
            "coordinators order its answers by arrival and cannot drop one a push has overtaken"),
    W10("heartbeats granted, said and kept",
            "coordinators cannot take its stream's silence for a host cut off: they notice one only through"
                    + " HTTP/2 keepalive"),
    W11("nothing more while the coordinator does not read"),
    W12("known states, every change pushed"),
    W13("stops by draining"),
    W14("every answer within the bounds"),
    W15("unknown request fields ignored"),
    W16("bounded, but two streams per connection taken"),
    W17("reflection served, and prompt",
            "coordinators know no schema for its version (an empty one)"),
    W18("a holder_id opens a holder stream",
            "no exact drain: the worker ends its drain on its quiet period (W13), not when its holders let go"),
    W19("a holder holds the drain until it releases or its stream ends", W18.lost),
    W20("ReleaseWorker releases only this process", W18.lost),
    W21("every answer while draining says holders", W18.lost),
    W22("stop when the last holder lets go", W18.lost);

    /** What the rule asks, in a few words. */
    final String asks;
    /** For a recommended rule, what coordinators lose without it; null for a required one. */
    final String lost;

    Rule(String asks) {
        this(asks, null);
    }

    Rule(String asks, String lost) {
        this.asks = asks;
        this.lost = lost;
    }

    boolean recommended() {
        return lost != null;
    }

    /** The rule numbered {@code id} ({@code "W9"}). */
    static Rule of(String id) {
        try {
            return valueOf(id);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("no rule " + id, e);
        }
    }
}
