package dev.rollcall.console;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the console: the page and its two resources, {@code /api/fleet} and
 * {@code /api/events}. Only {@code GET} and {@code HEAD} (else {@code 405}); no request body is
 * read (a request with one is answered, then its connection closed); every answer says
 * {@code no-store} and carries a content security policy that allows nothing from elsewhere. A
 * request whose {@code Host} the {@link HostRule} does not allow is refused {@code 403} (a page
 * elsewhere cannot reach the console through DNS rebinding); a missing, repeated or malformed one
 * is {@code 400}. A connection whose request head has not fully arrived within the request timeout
 * (counted from its opening or from its last answer) is closed, and so is one that takes none of
 * what it is sent for the write timeout. A connection is read no further while an answer waits unread
 * beyond the channel's high-water mark, and one that sent the next request anyway (pipelined behind
 * an answer it takes none of) is closed: a client that reads nothing costs at most one answer beyond
 * what its socket took.
 * Runs on the connection's event loop only.
 */
final class ConsoleHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(ConsoleHandler.class);

    /** The page's static parts: path → resource and content type. */
    private static final Map<String, String[]> STATIC = Map.of(
            "/", new String[] {"index.html", "text/html; charset=utf-8"},
            "/index.html", new String[] {"index.html", "text/html; charset=utf-8"},
            "/console.js", new String[] {"console.js", "text/javascript; charset=utf-8"},
            "/console.css", new String[] {"console.css", "text/css; charset=utf-8"});
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
            + " img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    /** How much of a refused Host an answer or a log line quotes. */
    private static final int QUOTED_HOST_CHARS = 120;

    /**
     * What every connection of one console shares; {@code hosted}: a host's own paths
     * ({@link InternalConsoleHost}); {@code pageForRemotePeers}: whether the page answers connections
     * from other hosts than this one.
     */
    record Site(Map<String, byte[]> resources, Supplier<FleetSnapshot> current, FleetJson json, EventStream events,
                HostRule hosts, long requestTimeoutNanos, long writeTimeoutNanos,
                Map<String, InternalConsoleHost.Endpoint> hosted, boolean pageForRemotePeers) {
    }

    private final Site site;
    private ScheduledFuture<?> deadline;
    private boolean awaitingRequest;
    private boolean streaming;
    private boolean closing;
    private int turnedAwayAt;

    ConsoleHandler(Site site) {
        this.site = site;
    }

    /** This connection is one too many (of {@code limit}): whatever it asks is answered {@code 503}. */
    void turnAway(int limit) {
        turnedAwayAt = limit;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        armDeadline(ctx);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        disarmDeadline();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest request && !streaming && !closing) {
                if (!ctx.channel().isWritable()) {
                    // Pipelined while an earlier answer waits unread: answering would hold one more in memory.
                    log.debug("console: closing the connection from {}: it sent another request while it read"
                            + " nothing of the answers before", ctx.channel().remoteAddress());
                    closing = true;
                    ctx.close();
                    return;
                }
                disarmDeadline();
                answer(ctx, request);
                if (!streaming && !ctx.channel().isWritable()) {
                    ctx.channel().config().setAutoRead(false); // read the next request once this answer is taken
                }
            }
            // Bodies and anything after a stream began or an answer that closes: read and dropped.
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (streaming && ctx.channel().isWritable()) {
            site.events().catchUp(ctx.channel());
        } else if (!streaming && ctx.channel().isWritable() && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.WRITER_IDLE && pendingBytes(ctx) > 0) {
            log.debug("console: closing the connection to {}: it took nothing of {} bytes for {} ms"
                    + " (rollcall.console.write-timeout)", ctx.channel().remoteAddress(), pendingBytes(ctx),
                    TimeUnit.NANOSECONDS.toMillis(site.writeTimeoutNanos()));
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    private static long pendingBytes(ChannelHandlerContext ctx) {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("console: closing the connection from {}: {}", ctx.channel().remoteAddress(),
                PeerText.escape(cause.toString()));
        ctx.close();
    }

    private void answer(ChannelHandlerContext ctx, HttpRequest request) {
        if (request.decoderResult().isFailure()) {
            Throwable cause = request.decoderResult().cause();
            if (cause instanceof TooLongHttpHeaderException) {
                text(ctx, HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "the request's headers exceed the"
                        + " console's " + ConsoleServer.MAX_HEADER_BYTES + " bytes", false, false);
            } else if (cause instanceof TooLongHttpLineException || cause instanceof TooLongFrameException) {
                text(ctx, HttpResponseStatus.REQUEST_URI_TOO_LONG, "the request line exceeds the console's "
                        + ConsoleServer.MAX_REQUEST_LINE + " bytes", false, false);
            } else {
                text(ctx, HttpResponseStatus.BAD_REQUEST, "not an HTTP/1.1 request the console can read", false, false);
            }
            return;
        }
        String method = request.method().name();
        boolean head = method.equals("HEAD");
        boolean keepAlive = HttpUtil.isKeepAlive(request) && !hasBody(request);
        if (turnedAwayAt > 0) {
            HttpResponse r = text(HttpResponseStatus.SERVICE_UNAVAILABLE, "the console has " + turnedAwayAt
                    + " connections open, its limit (rollcall.console.max-clients + " + ConsoleServer.SPARE_CONNECTIONS
                    + "); try again shortly", head);
            r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
            send(ctx, r, false);
            return;
        }
        if (!method.equals("GET") && !head) {
            HttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "the console is read-only: "
                    + PeerText.escape(method, 40) + " is not allowed (only GET and HEAD)", false);
            r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
            send(ctx, r, keepAlive);
            return;
        }
        String uri = request.uri();
        String path = uri.startsWith("/") ? pathOf(uri) : null;
        InternalConsoleHost.Endpoint endpoint = path == null ? null : site.hosted().get(path);
        List<String> hosts = request.headers().getAll(HttpHeaderNames.HOST);
        HostRule.Verdict verdict = hosts.size() != 1 ? HostRule.Verdict.MALFORMED
                : endpoint != null ? site.hosts().checkAllowingAddresses(hosts.get(0)) : site.hosts().check(hosts.get(0));
        if (verdict != HostRule.Verdict.ALLOWED) {
            String quoted = hosts.isEmpty() ? "(none)" : "'" + PeerText.escape(String.join("', '", hosts),
                    QUOTED_HOST_CHARS) + "'";
            log.debug("console: refused a request from {} for Host {} ({})", ctx.channel().remoteAddress(), quoted,
                    verdict);
            if (verdict == HostRule.Verdict.MALFORMED) {
                text(ctx, HttpResponseStatus.BAD_REQUEST, "a request to the console needs one well-formed Host header"
                        + " (name or address, optional port); it had " + quoted, head, false);
            } else if (endpoint != null) {
                text(ctx, HttpResponseStatus.FORBIDDEN, PeerText.escape(path, 80) + " answers requests for an IP"
                        + " address, localhost or a name in " + RollcallConsole.ALLOWED_HOSTS_KEY + "; Host " + quoted
                        + " is none of them (a page elsewhere may be reaching it through DNS rebinding); if it is how"
                        + " you reach it, add it to " + RollcallConsole.ALLOWED_HOSTS_KEY, head, false);
            } else {
                text(ctx, HttpResponseStatus.FORBIDDEN, "the console answers requests for localhost, a loopback"
                        + " address (127.0.0.0/8, [::1]) or a name in " + RollcallConsole.ALLOWED_HOSTS_KEY
                        + "; Host " + quoted + " is none of them (a page elsewhere may be reaching the console"
                        + " through DNS rebinding); if it is how you reach the console, add it to "
                        + RollcallConsole.ALLOWED_HOSTS_KEY, head, false);
            }
            return;
        }
        if (path == null) {
            text(ctx, HttpResponseStatus.BAD_REQUEST, "the console takes a path, not " + PeerText.escape(uri, 80),
                    head, false);
            return;
        }
        if (endpoint != null) {
            hosted(ctx, endpoint, path, request, head, keepAlive);
            return;
        }
        if (isPagePath(path) && !site.pageForRemotePeers() && !fromLoopback(ctx)) {
            text(ctx, HttpResponseStatus.FORBIDDEN, "the console page answers only connections from this host (a"
                    + " port-forward, a tunnel) unless " + RollcallConsole.ALLOW_REMOTE_KEY + "=true; the page has"
                    + " no authentication of its own", head, keepAlive);
            return;
        }
        String[] page = STATIC.get(path);
        if (page != null) {
            send(ctx, full(HttpResponseStatus.OK, page[1], site.resources().get(page[0]), head), keepAlive);
        } else if (path.equals("/api/fleet")) {
            Requirements required;
            try {
                required = requirements(uri);
            } catch (IllegalArgumentException e) {
                text(ctx, HttpResponseStatus.BAD_REQUEST, "require: " + e.getMessage(), head, keepAlive);
                return;
            }
            byte[] json = site.json().of(site.current().get().requiring(required)).json();
            send(ctx, full(HttpResponseStatus.OK, "application/json; charset=utf-8", json, head), keepAlive);
        } else if (path.equals("/api/events")) {
            if (head) {
                HttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                standard(r.headers(), "text/event-stream; charset=utf-8");
                send(ctx, r, keepAlive);
                return;
            }
            HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            standard(r.headers(), "text/event-stream; charset=utf-8");
            HttpUtil.setTransferEncodingChunked(r, true);
            if (site.events().open(ctx.channel(), r)) {
                streaming = true; // the request deadline no longer applies; the write timeout does
            } else {
                HttpResponse busy = text(HttpResponseStatus.SERVICE_UNAVAILABLE, "the console has "
                        + site.events().maxClients() + " event streams open, its limit (rollcall.console.max-clients);"
                        + " close a page or raise the limit", false);
                busy.headers().set(HttpHeaderNames.RETRY_AFTER, "5");
                send(ctx, busy, keepAlive);
            }
        } else {
            text(ctx, HttpResponseStatus.NOT_FOUND, "no such page: the console serves /, /api/fleet and /api/events"
                    + (site.hosted().isEmpty() ? "" : ", and " + String.join(", ", new TreeSet<>(site.hosted().keySet()))),
                    head, keepAlive);
        }
    }

    /** A host's own path: answered here, on the connection's thread (an endpoint does not block). */
    private void hosted(ChannelHandlerContext ctx, InternalConsoleHost.Endpoint endpoint, String path,
                        HttpRequest request, boolean head, boolean keepAlive) {
        InternalConsoleHost.Answer answer;
        try {
            answer = endpoint.answer(request.headers().get(HttpHeaderNames.ACCEPT));
        } catch (RuntimeException e) {
            log.warn("console: {} failed: {}", path, PeerText.escape(e.toString()));
            text(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, path + " failed: " + PeerText.escape(e.toString(), 200),
                    head, keepAlive);
            return;
        }
        send(ctx, full(HttpResponseStatus.valueOf(answer.status()), answer.contentType(), answer.body(), head),
                keepAlive);
    }

    /**
     * The requirements a request's {@code require} parameters give (comma-separated, repeatable), as
     * {@link Requirements#parse} reads them; none without any.
     *
     * @throws IllegalArgumentException naming the bad one, escaped
     */
    static Requirements requirements(String uri) {
        List<String> given;
        try {
            given = new QueryStringDecoder(uri).parameters().getOrDefault("require", List.of());
        } catch (IllegalArgumentException e) { // Netty's message quotes the raw query
            throw new IllegalArgumentException("the query is not percent-encoded as a URL's must be");
        }
        return given.isEmpty() ? Requirements.none() : Requirements.parse(String.join(",", given));
    }

    /** The page's own paths: what {@code pageForRemotePeers} guards. */
    static boolean isPagePath(String path) {
        return STATIC.containsKey(path) || path.equals("/api/fleet") || path.equals("/api/events");
    }

    private static boolean fromLoopback(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress() instanceof InetSocketAddress peer && peer.getAddress() != null
                && peer.getAddress().isLoopbackAddress();
    }

    /** The path of an origin-form request target: up to its query or fragment. */
    static String pathOf(String uri) {
        int end = uri.length();
        int q = uri.indexOf('?');
        int h = uri.indexOf('#');
        if (q >= 0) {
            end = q;
        }
        if (h >= 0 && h < end) {
            end = h;
        }
        return uri.substring(0, end);
    }

    private static boolean hasBody(HttpRequest request) {
        return HttpUtil.isTransferEncodingChunked(request) || HttpUtil.getContentLength(request, 0L) != 0L;
    }

    private void text(ChannelHandlerContext ctx, HttpResponseStatus status, String message, boolean head,
                      boolean keepAlive) {
        send(ctx, text(status, message, head), keepAlive);
    }

    private static FullHttpResponse text(HttpResponseStatus status, String message, boolean head) {
        return full(status, "text/plain; charset=utf-8", (message + "\n").getBytes(StandardCharsets.UTF_8), head);
    }

    private static FullHttpResponse full(HttpResponseStatus status, String type, byte[] body, boolean head) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        standard(r.headers(), type);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return r;
    }

    private static void standard(HttpHeaders h, String type) {
        h.set(HttpHeaderNames.CONTENT_TYPE, type);
        h.set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        h.set("X-Content-Type-Options", "nosniff");
        h.set("Referrer-Policy", "no-referrer");
        h.set("Content-Security-Policy", CSP);
    }

    /** Writes a whole answer; then waits for the next request, or closes once the peer has had it. */
    private void send(ChannelHandlerContext ctx, HttpResponse response, boolean keepAlive) {
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, "close");
            closing = true;
        }
        ctx.writeAndFlush(response).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                ctx.close();
            } else if (keepAlive) {
                armDeadline(ctx);
            } else if (ctx.channel() instanceof SocketChannel socket && socket.isActive()) {
                // Half-close, and let the peer's unread request bytes drain until it closes its side or
                // the deadline: closing at once would reset the connection and could lose the answer.
                socket.shutdownOutput();
                armDeadline(ctx);
            } else {
                ctx.close();
            }
        });
    }

    private void armDeadline(ChannelHandlerContext ctx) {
        if (streaming) {
            return;
        }
        disarmDeadline();
        awaitingRequest = true;
        deadline = ctx.executor().schedule(() -> {
            if (awaitingRequest && !streaming) {
                log.debug("console: closing the connection from {}: no request within {} ms"
                        + " (rollcall.console.request-timeout)", ctx.channel().remoteAddress(),
                        TimeUnit.NANOSECONDS.toMillis(site.requestTimeoutNanos()));
                ctx.close();
            }
        }, site.requestTimeoutNanos(), TimeUnit.NANOSECONDS);
    }

    private void disarmDeadline() {
        awaitingRequest = false;
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    /** The page's static parts, read once from the jar. */
    static Map<String, byte[]> pageResources() {
        return Map.of("index.html", resource("index.html"), "console.js", resource("console.js"),
                "console.css", resource("console.css"));
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
