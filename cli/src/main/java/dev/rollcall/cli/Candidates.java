package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import java.io.PrintWriter;
import java.util.List;

/**
 * Where the demo lists its workers for the resolver to discover: a watched file (static
 * discovery) or etcd (each worker registered under a lease, as {@code rollcall.worker.register}
 * does). Not thread-safe; the demo's main thread is its only user.
 */
interface Candidates extends AutoCloseable {

    /** Makes {@code endpoint} a candidate; {@code version} is what it will report (or {@code ""}). */
    void add(WorkerEndpoint endpoint, String version);

    /** Takes {@code endpoint} out of discovery. */
    void remove(WorkerEndpoint endpoint);

    /** Where the candidates live, for the story: {@code workers.txt}, {@code etcd}. */
    String where();

    /** The discovery lines of {@code rollcall.properties} that read these candidates. */
    List<String> discoveryProperties();

    /** Shows the candidates as they are stored. */
    void print(PrintWriter out);

    @Override
    void close();
}
