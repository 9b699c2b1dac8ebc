package dev.rollcall.discovery.consul;

/**
 * The index rules of Consul's "Blocking Queries" documentation (Implementation Details), as pure
 * functions so that they are tested on their own.
 *
 * <ul>
 *   <li><b>Reset the index if it goes backwards.</b> An {@code X-Consul-Index} lower than the one
 *       sent (a Raft snapshot restore, a new cluster behind the same address, a change in how the
 *       server indexes) resets it to 0, restarting the loop with a non-blocking query; keeping the
 *       old one would block until the server catches up, missing every change until then.</li>
 *   <li><b>Sanity check that the index is greater than zero</b>: an index of 0 does not block, so a
 *       server that answers 0 (an old Consul bug) would otherwise cause a busy loop. As the
 *       documentation says, an index below 1 is treated as 1 and waited on: it is neither a reset nor
 *       a reason for an extra non-blocking query (the answer that carried it was already applied).</li>
 *   <li><b>Rate limit.</b> A blocking query that came back early without the index advancing did
 *       not wait as it should have; the caller backs off before the next one
 *       ({@link #returnedEarlyWithoutChange}).</li>
 * </ul>
 */
final class BlockingIndex {

    private BlockingIndex() {
    }

    /**
     * The index to send next.
     *
     * @param sent     the index the query carried (0 for a non-blocking query)
     * @param returned the {@code X-Consul-Index} of the answer (0 when it had none)
     */
    static long next(long sent, long returned) {
        if (returned == 0) {
            return 1;
        }
        return wentBackwards(sent, returned) ? 0 : returned;
    }

    /**
     * Whether the index went backwards, which {@link #next} answers with a reset. An index of 0 is
     * not a step backwards but the server bug {@link #next} waits out on index 1.
     */
    static boolean wentBackwards(long sent, long returned) {
        return returned != 0 && Long.compareUnsigned(returned, sent) < 0;
    }

    /**
     * Whether a blocking query (one that carried an index) came back before half its wait time
     * with no newer index: the server or something in between is not blocking, and querying again
     * at once would spin.
     */
    static boolean returnedEarlyWithoutChange(long sent, long returned, long elapsedNanos, long waitNanos) {
        return sent > 0 && Long.compareUnsigned(returned, sent) <= 0 && elapsedNanos < waitNanos / 2;
    }
}
