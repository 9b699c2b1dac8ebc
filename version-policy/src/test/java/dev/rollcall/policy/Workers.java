package dev.rollcall.policy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;

/** Workers for policy tests. */
final class Workers {

    private static int nextPort = 7001;

    private Workers() {
    }

    /** A worker on its own port that reports {@code version}. */
    static synchronized WorkerInfo reporting(String version) {
        return WorkerInfo.of(WorkerEndpoint.of("worker.test", nextPort++), version);
    }
}
