package dev.rollcall.console;

import java.util.Map;
import java.util.Objects;

/**
 * Internal: how {@code rollcall-server} serves its plain-text endpoints ({@code /readyz},
 * {@code /healthz}, {@code /metrics}) beside the console page on one port. Not API — for Rollcall's
 * own modules (the architecture test allows {@code rollcall-server} alone), and it may change in any
 * release, as grpc-java's {@code Internal*} classes may.
 *
 * <p>A console started here differs from {@link RollcallConsole.Builder#start()} in three ways,
 * because it is a service's port, meant to be reached by probes and scrapers from elsewhere:
 * <ul>
 *   <li>it may bind any address without {@code rollcall.console.allow-remote};</li>
 *   <li>the hosted paths answer a request whose {@code Host} is any IP literal (kubelet and Prometheus
 *       name the pod's address), besides those the page answers: DNS rebinding needs a name, so a
 *       forged name is still refused;</li>
 *   <li>the page itself ({@code /}, {@code /api/fleet}, {@code /api/events}, its script and style)
 *       answers connections from other hosts only with {@code rollcall.console.allow-remote=true}:
 *       without it, only from loopback (a {@code kubectl port-forward}, an SSH tunnel), whatever
 *       address the port is bound to. Its {@code Host} rule is unchanged.</li>
 * </ul>
 * Every other door of the console holds for the hosted paths too (request and write timeouts,
 * request-line and header limits, the connection cap, {@code GET} and {@code HEAD} only).
 */
public final class InternalConsoleHost {

    private InternalConsoleHost() {
    }

    /** A hosted path's answer: HTTP status, content type, and the body (whole: these answers are small). */
    public record Answer(int status, String contentType, byte[] body) {
        public Answer {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
        }
    }

    /**
     * A hosted path. Called on one of the console's connection threads, so it must not block: it
     * answers from what it already has (a readiness verdict, a registry's scrape).
     */
    @FunctionalInterface
    public interface Endpoint {
        /**
         * The answer to a {@code GET} (a {@code HEAD} gets its status and headers).
         *
         * @param accept the request's {@code Accept} header, or {@code null}
         */
        Answer answer(String accept);
    }

    /**
     * Starts {@code console} serving {@code endpoints} (path → endpoint; a path must start with
     * {@code /} and must not be one of the page's) beside the page.
     *
     * @throws IllegalArgumentException when a path is not a path or is one of the page's
     * @throws dev.rollcall.api.ConfigurationException as {@link RollcallConsole.Builder#start()}, but
     *         never for the address not being loopback
     * @throws java.io.UncheckedIOException when the address cannot be bound
     */
    public static RollcallConsole start(RollcallConsole.Builder console, Map<String, Endpoint> endpoints) {
        Objects.requireNonNull(console, "console");
        for (String path : endpoints.keySet()) {
            if (!path.startsWith("/") || ConsoleHandler.isPagePath(path)) {
                throw new IllegalArgumentException("a hosted path must start with / and not be the page's: " + path);
            }
        }
        return console.hosting(Map.copyOf(endpoints)).start();
    }
}
