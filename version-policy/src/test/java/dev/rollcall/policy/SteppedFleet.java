package dev.rollcall.policy;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Workers on fixed loopback endpoints whose versions a test changes one step at a time, as a
 * rolling upgrade does: a worker stops (it no longer answers) and comes back with a new version.
 */
final class SteppedFleet {

    private final String[] versions;

    SteppedFleet(int size, String version) {
        if (size > 10) {
            throw new IllegalArgumentException("URL order equals index order only up to 10 workers");
        }
        versions = new String[size];
        Arrays.fill(versions, version);
    }

    /** Worker {@code i} answers with {@code version}. */
    SteppedFleet set(int i, String version) {
        versions[i] = version;
        return this;
    }

    /** Worker {@code i} does not answer (stopped, restarting, or not probed yet). */
    SteppedFleet down(int i) {
        versions[i] = null;
        return this;
    }

    /** The workers that answer, ordered by URL, as the resolver hands them to a policy. */
    List<WorkerInfo> workers() {
        List<WorkerInfo> workers = new ArrayList<>();
        for (int i = 0; i < versions.length; i++) {
            if (versions[i] != null) {
                workers.add(worker(i, versions[i]));
            }
        }
        return workers;
    }

    static WorkerInfo worker(int i, String version) {
        return WorkerInfo.of(WorkerEndpoint.parse("grpc://127.0.0.1:" + (7000 + i)), version);
    }
}
