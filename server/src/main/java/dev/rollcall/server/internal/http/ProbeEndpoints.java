package dev.rollcall.server.internal.http;

import dev.rollcall.api.PeerText;
import dev.rollcall.console.InternalConsoleHost.Answer;
import dev.rollcall.core.Readiness;
import dev.rollcall.core.WorkerResolver;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;

/**
 * What {@code /readyz}, {@code /healthz} and {@code /metrics} answer, from the resolver's own verdicts
 * and the registry's scrape; each answer is computed when asked, never cached. Called on the HTTP
 * port's connection threads: nothing here blocks. Thread-safe.
 */
final class ProbeEndpoints {

    /** The Prometheus text exposition format, 0.0.4: what Prometheus asks for unless it asks for OpenMetrics. */
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    /** OpenMetrics 1.0 text, for a scraper whose {@code Accept} names it. */
    static final String OPEN_METRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    /** A reason line quotes discovery's problem, which carries peer text: bounded, escaped. */
    static final int MAX_REASON_CHARS = 400;

    private static final String TEXT = "text/plain; charset=utf-8";

    private final WorkerResolver resolver;
    private final PrometheusMeterRegistry metrics;

    ProbeEndpoints(WorkerResolver resolver, PrometheusMeterRegistry metrics) {
        this.resolver = resolver;
        this.metrics = metrics;
    }

    /** {@code 200} when the readiness rule ({@code rollcall.readiness.*}) says ready, else {@code 503}; one line why. */
    Answer readiness() {
        if (resolver.isClosed()) {
            return line(503, "not ready: resolver " + resolver.name() + " is closed");
        }
        Readiness r = resolver.ready();
        return line(r.ready() ? 200 : 503, (r.ready() ? "ready: " : "not ready: ") + r.reason());
    }

    /** {@code 200} while the resolver runs (the port answering says the server does), {@code 503} once it is closed. */
    Answer health() {
        if (resolver.isClosed()) {
            return line(503, "unhealthy: resolver " + resolver.name() + " is closed");
        }
        return line(200, "ok: resolver " + resolver.name() + " runs, snapshot " + resolver.pin().number());
    }

    /**
     * The registry in the Prometheus text format, or OpenMetrics when {@code accept} names it (as
     * Prometheus does when it prefers it); never the protobuf format.
     */
    Answer metrics(String accept) {
        String type = accept != null && accept.contains("application/openmetrics-text") ? OPEN_METRICS : PROMETHEUS_TEXT;
        return new Answer(200, type, metrics.scrape(type).getBytes(StandardCharsets.UTF_8));
    }

    private static Answer line(int status, String text) {
        return new Answer(status, TEXT, (PeerText.escape(text, MAX_REASON_CHARS) + "\n").getBytes(StandardCharsets.UTF_8));
    }
}
