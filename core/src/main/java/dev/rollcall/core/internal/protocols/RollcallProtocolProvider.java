package dev.rollcall.core.internal.protocols;

import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code rollcall}: Rollcall's own {@code rollcall.v1} protocol, the default. The resolver speaks it
 * natively (its transport calls {@link ProbeClient} itself, exactly as before protocols were
 * pluggable); this provider names it, declares what it sees, and serves callers of the SPI (a
 * user's protocol that wraps it) through the same {@link ProbeClient} code.
 */
public final class RollcallProtocolProvider implements ProbeProtocolProvider {

    static final String NAME = "rollcall";
    static final RollcallProtocol PROTOCOL = new RollcallProtocol();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProbeProtocol create(Settings settings) {
        return PROTOCOL;
    }

    /** {@code WorkerInfo} and {@code WatchWorkerInfo} over {@link ProbeClient}. Stateless. */
    static final class RollcallProtocol implements ProbeProtocol {
        private static final ProbeCapabilities SEES = new ProbeCapabilities(Source.WORKER, Source.WORKER,
                Source.WORKER, Source.WORKER, Source.WORKER, true, true);

        private RollcallProtocol() {
        }

        @Override
        public ProbeCapabilities capabilities() {
            return SEES;
        }

        @Override
        public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
            return ProbeClient.onSharedEventLoop(request.maxResponseBytes())
                    .probe(managed(request.channel()), request.candidate(), request.timeout());
        }

        @Override
        public Watch watch(ProbeRequest request, WatchListener listener) {
            ProbeClient.Watch w = ProbeClient.onSharedEventLoop(request.maxResponseBytes()).watch(
                    managed(request.channel()), request.candidate(), Duration.ZERO, new ProbeClient.StreamListener() {
                        @Override
                        public void answer(ProbeOutcome answer) {
                            listener.answer(answer);
                        }

                        @Override
                        public void ended(Status status) {
                            listener.ended(status);
                        }
                    });
            return w::cancel;
        }

        /** {@link ProbeClient} takes a {@link ManagedChannel}: the resolver's is one; any other is wrapped, never shut down. */
        private static ManagedChannel managed(Channel channel) {
            if (channel instanceof ManagedChannel m) {
                return m;
            }
            return new ManagedChannel() {
                @Override
                public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
                    return channel.newCall(method, options);
                }

                @Override
                public String authority() {
                    return channel.authority();
                }

                @Override
                public ManagedChannel shutdown() {
                    return this; // the caller's channel: not ours to shut down
                }

                @Override
                public boolean isShutdown() {
                    return false;
                }

                @Override
                public boolean isTerminated() {
                    return false;
                }

                @Override
                public ManagedChannel shutdownNow() {
                    return this;
                }

                @Override
                public boolean awaitTermination(long timeout, TimeUnit unit) {
                    return false;
                }
            };
        }
    }
}
