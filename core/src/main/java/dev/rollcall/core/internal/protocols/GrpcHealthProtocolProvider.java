package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;

/**
 * {@code grpc-health}: the standard {@code grpc.health.v1.Health} service for the serving state
 * (pushed by {@code Watch}, {@code Check} polled where {@code Watch} is not served), the version from
 * discovery's {@code rollcall.version} label. Key: {@code rollcall.probe.grpc-health.service}, the
 * service name asked about (default {@code ""}: the whole server).
 */
public final class GrpcHealthProtocolProvider implements ProbeProtocolProvider {

    static final String NAME = "grpc-health";
    /** Longer than any fully qualified gRPC service name anybody wrote. */
    static final int MAX_SERVICE_CHARS = 256;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProbeProtocol create(Settings settings) {
        String service = settings.get(CoreKeys.GRPC_HEALTH_SERVICE);
        if (service.length() > MAX_SERVICE_CHARS || !service.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
            throw ConfigurationException.invalid(settings.fullKey("service"), service,
                    "a gRPC service name (at most " + MAX_SERVICE_CHARS + " printable characters, no white space),"
                            + " or empty for the whole server");
        }
        return new GrpcHealthProtocol(service);
    }
}
