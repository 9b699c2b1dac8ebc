package dev.rollcall.core.planted;

import dev.rollcall.worker.RollcallWorker;

/** Planted for {@code ArchitectureTest}: a back-reference from the resolver to the worker side. */
public final class CoreCallsTheWorker {

    private CoreCallsTheWorker() {
    }

    static Object start() throws java.io.IOException {
        return RollcallWorker.builder().version("1").start();
    }
}
