package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;

/**
 * Read-only view: the worker for a routing key, the same one every time while it stays in the
 * fleet. Chosen by rendezvous (highest-random-weight) hashing over exactly the workers that
 * {@link InvocationTargets#target(String, String, Caller) target(service, method, caller)} returns —
 * compatible, offering the target, reachable by the caller — so that when a worker leaves only its
 * keys move (evenly to the others), and a worker that joins takes about its share from each.
 *
 * <p>The weight of a worker for a key is a 64-bit mix of two hashes: FNV-1a over the UTF-16 chars
 * of the key and of the worker's URL, each finished with MurmurHash3's {@code fmix64}, combined as
 * {@code fmix64(keyHash ^ fmix64(urlHash + 0x9E3779B97F4A7C15))} and compared unsigned. It is fixed:
 * every coordinator, in every process and version of Rollcall that documents it so, routes a key to
 * the same worker.
 *
 * <p>Needs no protobuf. Every method answers from one immutable snapshot; implementations are
 * thread-safe and never block.
 */
public interface KeyRouting {

    /**
     * The worker that takes requests with {@code key} for {@code method} of {@code service}.
     *
     * @throws TargetLookupException as {@link InvocationTargets#target} does, when no worker may take it
     */
    WorkerInfo route(String service, String method, Caller caller, String key);

    /**
     * The weight of the worker at {@code workerUrl} for {@code key}, as described above: among any
     * set of workers, the one with the highest weight (compared unsigned) owns the key. For code
     * that routes outside a snapshot, such as a gRPC load-balancing policy.
     */
    static long weight(String key, String workerUrl) {
        return RendezvousHash.weight(RendezvousHash.hash(key), RendezvousHash.hash(workerUrl));
    }
}
