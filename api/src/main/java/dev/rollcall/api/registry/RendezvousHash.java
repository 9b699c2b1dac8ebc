package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;
import java.util.List;

/** Rendezvous (highest-random-weight) hashing, as {@link KeyRouting} documents it. Stateless. */
final class RendezvousHash {

    private RendezvousHash() {
    }

    /** The worker with the highest weight for {@code key}; ties (practically never) go to the lower URL. */
    static WorkerInfo pick(List<WorkerInfo> workers, String key) {
        long keyHash = hash(key);
        WorkerInfo best = null;
        long bestWeight = 0;
        for (WorkerInfo w : workers) {
            long weight = weight(keyHash, hash(w.endpoint().url()));
            if (best == null || Long.compareUnsigned(weight, bestWeight) > 0) {
                best = w;
                bestWeight = weight;
            }
        }
        return best;
    }

    static long weight(long keyHash, long workerHash) {
        return fmix64(keyHash ^ fmix64(workerHash + 0x9E3779B97F4A7C15L));
    }

    /** FNV-1a (64-bit) over the UTF-16 chars, finished with fmix64 so that every bit counts. */
    static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        return fmix64(h);
    }

    /** MurmurHash3's 64-bit finalizer. */
    static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}
