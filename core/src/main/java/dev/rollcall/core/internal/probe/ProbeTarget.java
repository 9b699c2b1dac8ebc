package dev.rollcall.core.internal.probe;

import dev.rollcall.api.WorkerEndpoint;

/**
 * What the probe code needs of a worker it probes: where it is, its {@link ProbeSlot}, and what the
 * last outcomes made of it. Implemented by the tracker's per-worker state; on the serial context.
 */
public interface ProbeTarget {

    /** The probe scheduler's part of this worker's state. */
    ProbeSlot probeSlot();

    WorkerEndpoint endpoint();

    /** Failed probes since it last stayed up: the retry number for the backoff. */
    int failures();

    /** Whether its last probe answered and nothing has cast doubt on it since. */
    boolean answered();

    /** Whether readers may be using it. */
    boolean inUse();
}
