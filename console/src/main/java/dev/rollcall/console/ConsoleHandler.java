package dev.rollcall.console;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.rollcall.api.registry.FleetSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every request of the console: the page and its two resources, {@code /api/fleet} and
 * {@code /api/events}. Only {@code GET} and {@code HEAD} (else {@code 405}); no request body is
 * read; every answer says {@code no-store} and carries a content security policy that allows
 * nothing from elsewhere. While the console is bound to loopback, a request whose {@code Host} is
 * not a loopback name is refused ({@code 403}): a page elsewhere cannot reach the console through
 * DNS rebinding. Runs on the console's HTTP threads.
 */
final class ConsoleHandler implements HttpHandler {

    private static final Logger log = LoggerFactory.getLogger(ConsoleHandler.class);

    /** The page's static parts: path → resource and content type. */
    private static final Map<String, String[]> STATIC = Map.of(
            "/", new String[] {"index.html", "text/html; charset=utf-8"},
            "/index.html", new String[] {"index.html", "text/html; charset=utf-8"},
            "/console.js", new String[] {"console.js", "text/javascript; charset=utf-8"},
            "/console.css", new String[] {"console.css", "text/css; charset=utf-8"});
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
            + " img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final Set<String> LOOPBACK_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]");

    private final Map<String, byte[]> resources;
    private final Supplier<FleetSnapshot> current;
    private final FleetJson json;
    private final EventStream events;
    private final boolean loopbackOnly;

    ConsoleHandler(Supplier<FleetSnapshot> current, FleetJson json, EventStream events, boolean loopbackOnly) {
        this.current = current;
        this.json = json;
        this.events = events;
        this.loopbackOnly = loopbackOnly;
        this.resources = Map.of("index.html", resource("index.html"), "console.js", resource("console.js"),
                "console.css", resource("console.css"));
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        boolean streaming = false;
        try (InputStream body = exchange.getRequestBody()) {
            // Never read: a GET has no body worth reading, and closing it is what the server asks.
            String method = exchange.getRequestMethod();
            Headers h = exchange.getResponseHeaders();
            h.set("Cache-Control", "no-store");
            h.set("X-Content-Type-Options", "nosniff");
            h.set("Referrer-Policy", "no-referrer");
            h.set("Content-Security-Policy", CSP);
            if (!method.equals("GET") && !method.equals("HEAD")) {
                h.set("Allow", "GET, HEAD");
                text(exchange, 405, "the console is read-only: " + method + " is not allowed (only GET and HEAD)");
                return;
            }
            if (loopbackOnly && !loopbackHost(exchange.getRequestHeaders().getFirst("Host"))) {
                text(exchange, 403, "the console is bound to loopback and answers only requests for localhost,"
                        + " 127.0.0.1 or [::1]");
                return;
            }
            boolean head = method.equals("HEAD");
            String path = exchange.getRequestURI().getRawPath();
            String[] page = STATIC.get(path);
            if (page != null) {
                send(exchange, 200, page[1], resources.get(page[0]), head);
            } else if (path.equals("/api/fleet")) {
                send(exchange, 200, "application/json; charset=utf-8", json.of(current.get()).json(), head);
            } else if (path.equals("/api/events")) {
                h.set("Content-Type", "text/event-stream; charset=utf-8");
                if (head) {
                    exchange.sendResponseHeaders(200, -1);
                } else if (events.open(exchange)) {
                    streaming = true;
                } else {
                    h.remove("Content-Type");
                    h.set("Retry-After", "5");
                    text(exchange, 503, "the console has " + events.maxClients() + " event streams open, its limit"
                            + " (rollcall.console.max-clients); close a page or raise the limit");
                }
            } else {
                text(exchange, 404, "no such page: the console serves /, /api/fleet and /api/events");
            }
        } catch (IOException | RuntimeException e) {
            log.debug("console: request {} {} from {} failed: {}", exchange.getRequestMethod(),
                    exchange.getRequestURI(), exchange.getRemoteAddress(), e.toString());
            throw e;
        } finally {
            if (!streaming) {
                exchange.close();
            }
        }
    }

    private static boolean loopbackHost(String host) {
        if (host == null) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        int colon = h.lastIndexOf(':');
        if (colon > 0 && h.indexOf(']') < colon) {
            h = h.substring(0, colon);
        }
        return LOOPBACK_HOSTS.contains(h) || h.startsWith("127.");
    }

    private static void text(HttpExchange exchange, int code, String message) throws IOException {
        send(exchange, code, "text/plain; charset=utf-8", (message + "\n").getBytes(StandardCharsets.UTF_8),
                exchange.getRequestMethod().equals("HEAD"));
    }

    private static void send(HttpExchange exchange, int code, String type, byte[] body, boolean head)
            throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        if (head) {
            exchange.getResponseHeaders().set("Content-Length", Integer.toString(body.length));
            exchange.sendResponseHeaders(code, -1);
            return;
        }
        exchange.sendResponseHeaders(code, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static byte[] resource(String name) {
        try (InputStream in = ConsoleHandler.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("the console's page resource " + name + " is missing from its jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the console's page resource " + name, e);
        }
    }

    /** For messages: the address as a URL's authority. */
    static String authority(InetSocketAddress address) {
        String host = address.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
