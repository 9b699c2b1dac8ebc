package dev.rollcall.protocol.spi;

import dev.rollcall.api.Settings;

/**
 * Creates the {@link ProbeProtocol} of one {@link #name()}. Found by {@link java.util.ServiceLoader}:
 * list the implementation in {@code META-INF/services/dev.rollcall.protocol.spi.ProbeProtocolProvider}
 * (and {@code provides} it in {@code module-info} for JPMS users). Needs a public no-argument
 * constructor. Rollcall's own are {@code rollcall} (the default), {@code datafusion-distributed},
 * {@code grpc-health} and {@code none}.
 *
 * <p>One protocol per resolver: a candidate cannot name its own (a registry entry, which nothing
 * verifies, must not be able to switch its worker to a protocol that verifies less). A fleet that
 * speaks two protocols runs two resolvers.
 */
public interface ProbeProtocolProvider {

    /** The name selected by {@code rollcall.probe.protocol}, e.g. {@code grpc-health}: lower case, no dots. */
    String name();

    /**
     * Creates the protocol from its settings, scoped to {@code rollcall.probe.<name>.}. Called once
     * per resolver (and per {@code WorkerProbe}) at build time, on the builder's thread. Reads every
     * key it supports here and validates them all.
     *
     * @throws dev.rollcall.api.ConfigurationException naming the bad key and value
     */
    ProbeProtocol create(Settings settings);
}
