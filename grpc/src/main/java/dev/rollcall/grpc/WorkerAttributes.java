package dev.rollcall.grpc;

import io.grpc.Attributes;

/**
 * What a {@code rollcall:} name resolver attaches to each address group it hands a gRPC channel:
 * the worker behind the address, as the snapshot that listed it says. Load-balancing policies and
 * interceptors may read them; they never change for one address group (a new instance at the same
 * address is a new group).
 */
public final class WorkerAttributes {

    /** The worker's URL, e.g. {@code grpc://10.0.0.7:8815}. */
    public static final Attributes.Key<String> URL = Attributes.Key.create("rollcall.worker.url");

    /** The version the worker reported. */
    public static final Attributes.Key<String> VERSION = Attributes.Key.create("rollcall.worker.version");

    /** The worker's instance id: new on every process start. */
    public static final Attributes.Key<String> INSTANCE_ID = Attributes.Key.create("rollcall.worker.instance-id");

    private WorkerAttributes() {
    }
}
