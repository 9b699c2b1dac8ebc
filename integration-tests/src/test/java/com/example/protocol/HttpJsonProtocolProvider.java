package com.example.protocol;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.protocol.spi.ProbeCapabilities;
import dev.rollcall.protocol.spi.ProbeCapabilities.Source;
import dev.rollcall.protocol.spi.ProbeProtocol;
import dev.rollcall.protocol.spi.ProbeProtocolProvider;
import dev.rollcall.protocol.spi.ProbeRequest;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code rollcall.probe.protocol=http-json}: asks {@code GET http://<host>:<port><path>} and takes
 * the {@code "version"} of the JSON it answers (as Trino's {@code /v1/info} does). Keys:
 * {@code rollcall.probe.http-json.path} (default {@code /v1/info}). A jar of its own lists it in
 * {@code META-INF/services/dev.rollcall.protocol.spi.ProbeProtocolProvider}.
 */
public final class HttpJsonProtocolProvider implements ProbeProtocolProvider {

    private static final Pattern VERSION = Pattern.compile("\"version\"\\s*:\\s*\"([^\"\\\\]*)\"");

    @Override
    public String name() {
        return "http-json";
    }

    @Override
    public ProbeProtocol create(Settings settings) {
        String path = settings.string("path", "/v1/info");
        // Daemon threads with a name: the HTTP client's callbacks and the bounded reads run here.
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "http-json-probe");
            t.setDaemon(true);
            return t;
        });
        HttpClient http = HttpClient.newBuilder().executor(threads).build();
        return new ProbeProtocol() {
            @Override
            public ProbeCapabilities capabilities() {
                // The version is the worker's; no instance id, state, labels or services; polled;
                // no gRPC channel (the resolver dials nothing for it: this protocol dials HTTP itself).
                return new ProbeCapabilities(Source.WORKER, Source.NONE, Source.NONE, Source.NONE, Source.NONE,
                        false, false);
            }

            @Override
            public CompletableFuture<ProbeOutcome> probe(ProbeRequest request) {
                URI uri = URI.create("http://" + request.candidate().host() + ":" + request.candidate().port() + path);
                HttpRequest get = HttpRequest.newBuilder(uri).timeout(request.timeout()).GET().build();
                return http.sendAsync(get, HttpResponse.BodyHandlers.ofInputStream())
                        .thenApply(response -> answer(request, response))
                        .exceptionally(failure -> failed(failure));
            }
        };
    }

    /** The answer's version, read up to the resolver's bound and no further. */
    private static ProbeOutcome answer(ProbeRequest request, HttpResponse<InputStream> response) {
        try (InputStream body = response.body()) {
            if (response.statusCode() != 200) {
                return new ProbeOutcome.Failed(Status.Code.UNAVAILABLE, "HTTP " + response.statusCode());
            }
            byte[] bytes = body.readNBytes(request.maxResponseBytes() + 1);
            if (bytes.length > request.maxResponseBytes()) {
                return new ProbeOutcome.Failed(Status.Code.RESOURCE_EXHAUSTED,
                        "answer too large (limit rollcall.probe.max-response-bytes)");
            }
            Matcher m = VERSION.matcher(new String(bytes, StandardCharsets.UTF_8));
            if (!m.find()) {
                return new ProbeOutcome.Failed(Status.Code.INTERNAL, "no \"version\" in the answer");
            }
            return new ProbeOutcome.Answered(new WorkerInfo(request.candidate(), m.group(1), "", Map.of(), List.of()),
                    ServingState.SERVING);
        } catch (IOException e) {
            return failed(e);
        }
    }

    private static ProbeOutcome failed(Throwable failure) {
        Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
        Status.Code code = cause instanceof HttpTimeoutException ? Status.Code.DEADLINE_EXCEEDED : Status.Code.UNAVAILABLE;
        return new ProbeOutcome.Failed(code, code + ": " + cause);
    }
}
