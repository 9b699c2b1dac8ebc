package dev.rollcall.protocol.spi;

import java.util.Objects;

/**
 * What a protocol's answers can carry, and where each part comes from: declared by the protocol,
 * never guessed. The resolver reads it (whether to connect, whether to watch, whether a version
 * comes from discovery's labels and so must be re-read when they change) and the docs print it.
 * Immutable.
 *
 * @param version   where the version the policy judges comes from
 * @param instance  where the instance id comes from ({@link Source#NONE}: a restart in place is
 *                  seen only through the connection dropping)
 * @param state     where the serving state comes from ({@link Source#NONE}: SERVING while it answers)
 * @param labels    where the worker's labels come from
 * @param services  where its gRPC services and handlers come from
 * @param push      whether {@link ProbeProtocol#watch} pushes changes (else answers are polled every
 *                  {@code rollcall.probe.refresh-interval})
 * @param connects  whether probes need a gRPC connection: {@code false} means the resolver never
 *                  dials the worker (no probe channel, no schema fetch; a channel only when the
 *                  user's own calls ask for one) and {@link ProbeRequest#channel()} is {@code null}
 */
public record ProbeCapabilities(Source version, Source instance, Source state, Source labels, Source services,
                                boolean push, boolean connects) {

    /** Where one part of an answer comes from. */
    public enum Source {
        /** The worker's own answer: checked against the worker itself. */
        WORKER,
        /** The candidate's discovery metadata (its labels): a claim nothing verifies. */
        DISCOVERY,
        /** Nowhere: the part is empty (or, for the state, SERVING). */
        NONE
    }

    public ProbeCapabilities {
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(labels, "labels");
        Objects.requireNonNull(services, "services");
        if (version == Source.NONE) {
            throw new IllegalArgumentException("a protocol must take the version from somewhere: the policy judges it");
        }
    }
}
