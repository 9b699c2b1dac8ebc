package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.Settings;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.DiscoveryAnswers;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import dev.rollcall.protocol.spi.ProbeRequest;
import java.util.concurrent.CompletableFuture;

/**
 * {@code none}: no probe and no connection. The version, labels and capabilities
 * ({@code rollcall.capabilities}) are discovery's ({@link DiscoveryAnswers}); every candidate with a
 * valid {@code rollcall.version} label (and no malformed {@code rollcall.capabilities}) is
 * SERVING, one without is failed with a reason naming the label. What is lost (nothing verifies the
 * claim; a restart in place or a hung worker is seen only as far as the registry sees it) is in
 * docs/probe-protocols.md.
 */
public final class NoneProtocolProvider implements ProbeProtocolProvider {

    static final String NAME = "none";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProbeProtocol create(Settings settings) {
        return new ProbeProtocol() {
            private final ProbeCapabilities sees = new ProbeCapabilities(Source.DISCOVERY, Source.DISCOVERY,
                    Source.NONE, Source.DISCOVERY, Source.NONE, false, false);

            @Override
            public ProbeCapabilities capabilities() {
                return sees;
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
                return CompletableFuture.completedFuture(
                        DiscoveryAnswers.answer(request.candidate(), ServingState.SERVING, NAME));
            }

            @Override
            public String toString() {
                return NAME;
            }
        };
    }
}
