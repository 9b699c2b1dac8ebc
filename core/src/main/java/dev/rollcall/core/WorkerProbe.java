package dev.rollcall.core;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.core.internal.ProbeFailures;
import dev.rollcall.core.internal.ProbeTls;
import dev.rollcall.core.internal.catalog.CoreKeys;
import dev.rollcall.core.internal.probe.ProbeTransport;
import dev.rollcall.core.internal.probe.ProtocolTransport;
import dev.rollcall.core.internal.protocols.ProbeProtocols;
import dev.rollcall.protocol.ProbeOutcome;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One-off questions to workers, for users who want only that and no resolver: each probe opens a
 * connection, asks {@code WorkerInfo} (or, with {@link Builder#protocol}, the chosen probe
 * protocol's question) with a deadline and closes the connection. {@code grpc://}
 * endpoints are asked in plaintext, {@code grpcs://} ones over TLS as the {@link Builder} says (by
 * default trusting the JDK's CAs).
 *
 * <pre>{@code
 * ProbeOutcome outcome = WorkerProbe.builder().trust(Path.of("ca.pem")).build()
 *         .probe(WorkerEndpoint.parse("grpcs://10.0.0.7:7000"), Duration.ofSeconds(2)).join();
 * }</pre>
 *
 * <p>Immutable and thread-safe; never blocks the caller and holds no threads of its own (it uses
 * gRPC's shared event loop), so there is nothing to close. Futures complete on a gRPC network
 * thread: do not block in their callbacks.
 */
public final class WorkerProbe {

    private static final WorkerProbe DEFAULTS = new WorkerProbe(
            ProbeClient.onSharedEventLoop(CoreKeys.MAX_RESPONSE_BYTES.defaultValue(), ProbeTls.DEFAULT),
            ProbeProtocols.rollcall(), CoreKeys.MAX_RESPONSE_BYTES.defaultValue());

    private final ProbeClient client;
    /** Another protocol than {@code rollcall}'s (whose probes go to {@link #client} directly); null for it. */
    private final ProbeTransport other;

    private WorkerProbe(ProbeClient client, ProbeProtocols.Chosen protocol, int maxBytes) {
        this.client = client;
        this.other = protocol.isRollcall() ? null : ProtocolTransport.of(protocol, client, null, null, maxBytes);
    }

    /** Plaintext for {@code grpc://}, the JDK's CAs for {@code grpcs://}, answers up to 1 MiB. */
    public static WorkerProbe defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * What the worker at {@code endpoint} says about itself, or why it said nothing. The future
     * never completes exceptionally: an unreachable worker, a deadline or a malformed answer is a
     * {@link ProbeOutcome.Failed}.
     */
    public CompletableFuture<ProbeOutcome> probe(WorkerEndpoint endpoint, Duration timeout) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(timeout, "timeout");
        if (other != null) {
            ProbeTransport.Link link = other.open(endpoint);
            return link.probe(endpoint, timeout).whenComplete((outcome, impossible) -> link.close(false));
        }
        ManagedChannel channel;
        try {
            channel = client.open(endpoint);
        } catch (RuntimeException cannotOpen) {
            return CompletableFuture.completedFuture(ProbeFailures.failed(cannotOpen, timeout));
        }
        return client.probe(channel, endpoint, timeout).whenComplete((outcome, impossible) -> channel.shutdownNow());
    }

    /**
     * What the worker at {@code endpoint} reports about itself, asked with {@link #defaults()}.
     *
     * @return a future that fails with {@link io.grpc.StatusRuntimeException} (whose description is
     *         the outcome's reason) when the worker cannot be reached within {@code timeout}, is not
     *         a Rollcall worker or answers malformed
     */
    public static CompletableFuture<WorkerInfo> info(WorkerEndpoint endpoint, Duration timeout) {
        return DEFAULTS.probe(endpoint, timeout).thenApply(outcome -> {
            if (outcome instanceof ProbeOutcome.Failed f) {
                throw Status.fromCode(f.code()).withDescription(f.reason()).asRuntimeException();
            }
            return ((ProbeOutcome.Answered) outcome).info();
        });
    }

    /**
     * Whether the worker at {@code endpoint} reports exactly {@code expected} as its version.
     *
     * @return a future of {@code true} or {@code false} when the worker answered; it fails (with
     *         {@link io.grpc.StatusRuntimeException}) when the worker could not be reached in time,
     *         so that "another version" and "down" can be told apart
     */
    public static CompletableFuture<Boolean> hasVersion(WorkerEndpoint endpoint, String expected, Duration timeout) {
        Objects.requireNonNull(expected, "expected");
        return info(endpoint, timeout).thenApply(info -> info.version().equals(expected));
    }

    /**
     * {@link #hasVersion(WorkerEndpoint, String, Duration)} for an endpoint written as a URL.
     *
     * @throws IllegalArgumentException when {@code endpoint} is not a valid endpoint URL
     */
    public static CompletableFuture<Boolean> hasVersion(String endpoint, String expected, Duration timeout) {
        return hasVersion(WorkerEndpoint.parse(endpoint), expected, timeout);
    }

    /**
     * Configures a {@link WorkerProbe}: the resolver's {@code rollcall.probe.tls.*} and
     * {@code rollcall.probe.max-response-bytes} keys, from {@link #config} or set here (values set
     * here win). Not thread-safe.
     */
    public static final class Builder {
        private RollcallConfig config;
        private Path ca;
        private Path cert;
        private Path key;
        private String authority;
        private String protocol;
        private ClassLoader loader;

        private Builder() {
        }

        /**
         * The probe protocol ({@code rollcall.probe.protocol}, default {@code rollcall}): the
         * resolver's choice, e.g. {@code datafusion-distributed}. With {@code grpc-health} and
         * {@code none} the version is the endpoint's {@code rollcall.version} label, which an endpoint
         * parsed from a URL does not have: give the endpoint as discovery lists it.
         */
        public Builder protocol(String name) {
            this.protocol = Objects.requireNonNull(name, "protocol");
            return this;
        }

        /** Where protocols are looked up; default the thread's context class loader. */
        public Builder classLoader(ClassLoader loader) {
            this.loader = Objects.requireNonNull(loader, "classLoader");
            return this;
        }

        /** Where unset values come from ({@code rollcall.probe.*}); default none. */
        public Builder config(RollcallConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** The CA certificates (one PEM file) {@code grpcs://} workers must chain to ({@code rollcall.probe.tls.ca}). */
        public Builder trust(Path caPemFile) {
            this.ca = Objects.requireNonNull(caPemFile, "caPemFile");
            return this;
        }

        /** The client certificate chain and PKCS#8 key (PEM) for mutual TLS ({@code tls.cert}, {@code tls.key}). */
        public Builder clientCertificate(Path certificateChainPemFile, Path privateKeyPemFile) {
            this.cert = Objects.requireNonNull(certificateChainPemFile, "certificateChainPemFile");
            this.key = Objects.requireNonNull(privateKeyPemFile, "privateKeyPemFile");
            return this;
        }

        /** The name certificates are checked against instead of each endpoint's host ({@code tls.authority}). */
        public Builder authority(String name) {
            this.authority = Objects.requireNonNull(name, "authority");
            return this;
        }

        /**
         * Reads and checks the files, and finds the protocol.
         *
         * @throws ConfigurationException naming the key and path of a missing, unreadable or
         *                                mismatched file, a bad configured value, or a protocol that
         *                                no jar provides (listing those found)
         */
        public WorkerProbe build() {
            Settings root = (config != null ? config : RollcallConfig.of(Map.of())).settings();
            Settings probe = root.scope("rollcall.probe.");
            ProbeProtocols.Chosen chosen = ProbeProtocols.choose(root, protocol,
                    loader != null ? loader : Thread.currentThread().getContextClassLoader());
            int maxBytes = probe.get(CoreKeys.MAX_RESPONSE_BYTES);
            return new WorkerProbe(ProbeClient.onSharedEventLoop(maxBytes,
                    ProbeTls.read(probe, ca, cert, key, authority)), chosen, maxBytes);
        }
    }
}
