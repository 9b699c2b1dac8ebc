package dev.rollcall.console;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.ConfigOrigins;
import dev.rollcall.core.WorkerResolver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A live, read-only page of one {@link WorkerResolver}'s fleet, served over HTTP/1.1 (on Netty, the
 * transport gRPC already brings): every candidate with its version, state and reason, the version histogram, the policy's
 * cohort, discovery's health and a timeline of the last snapshots, pushed to the browser as
 * Server-Sent Events on every snapshot.
 *
 * <pre>{@code
 * try (RollcallConsole console = RollcallConsole.serve(resolver, new InetSocketAddress("127.0.0.1", 8470))) {
 *     System.out.println("fleet page: " + console.uri());
 * }
 * }</pre>
 *
 * <p><b>Paths.</b> {@code /} the page (HTML, one script, one style sheet, nothing from elsewhere);
 * {@code /api/fleet} the current snapshot as JSON; {@code /api/events} the same JSON as an event
 * stream, one event per snapshot. Only {@code GET} and {@code HEAD}; anything else is {@code 405}.
 *
 * <p><b>Where it listens.</b> Loopback unless told otherwise: binding any other address (the
 * wildcard included) needs {@link Builder#allowRemote(boolean)} or
 * {@code rollcall.console.allow-remote=true}, and fails naming that key without it. The page has no
 * authentication of its own; put it behind what guards your other admin pages.
 *
 * <p><b>Which Host it answers.</b> A request whose {@code Host} is not a literal loopback address
 * ({@code 127.0.0.0/8}, {@code [::1]}), {@code localhost}, or a name listed in
 * {@value #ALLOWED_HOSTS_KEY} is refused {@code 403} (a missing or malformed one {@code 400}),
 * wherever the console listens: a page elsewhere cannot reach it through DNS rebinding, and remote
 * access needs the operator to name the hosts it is reached by.
 *
 * <p><b>Limits.</b> A connection's request head must arrive within {@value #REQUEST_TIMEOUT_KEY}
 * (from its opening or its last answer) or the connection is closed; request lines over
 * {@value ConsoleServer#MAX_REQUEST_LINE} bytes are {@code 414}, headers over
 * {@value ConsoleServer#MAX_HEADER_BYTES} bytes {@code 431}; at most {@code max-clients + 64}
 * connections are open at once (more get {@code 503} with {@code Retry-After}). Reads never block a
 * thread, so connections that stall cannot keep the next request from being answered.
 *
 * <p><b>Threads.</b> The console never blocks the resolver: its listener only hands each snapshot to
 * the console's sender thread ({@code rollcall-console-<name>-events}, latest wins). Connections are
 * served by {@code rollcall-console-<name>-http-1} and {@code -2}. At most
 * {@code rollcall.console.max-clients} event streams are open at once (more get {@code 503}), and a
 * connection that takes none of what it is sent for {@code rollcall.console.write-timeout} is closed,
 * so a stalled browser cannot hold the others. No JVM-wide property is read or set. Thread-safe;
 * {@link #close()} stops the server, its threads and its listener, and leaves the resolver running.
 */
public final class RollcallConsole implements AutoCloseable {

    /** Binding a non-loopback address needs this key set to {@code true} (or {@link Builder#allowRemote}). */
    public static final String ALLOW_REMOTE_KEY = "rollcall.console.allow-remote";
    /** How many event streams may be open at once (default and bounds: {@link ConsoleKeys}). */
    public static final String MAX_CLIENTS_KEY = "rollcall.console.max-clients";
    /** How long a connection may take none of what it is sent before it is closed; default 10s. */
    public static final String WRITE_TIMEOUT_KEY = "rollcall.console.write-timeout";
    /** How long a connection's request head may take to arrive (from its opening or last answer); default 5s. */
    public static final String REQUEST_TIMEOUT_KEY = "rollcall.console.request-timeout";
    /** Host names (or addresses) beside loopback's that requests may name, comma-separated; default none. */
    public static final String ALLOWED_HOSTS_KEY = "rollcall.console.allowed-hosts";
    /** How many snapshots the timeline keeps (default and bounds: {@link ConsoleKeys}). */
    public static final String TIMELINE_KEY = "rollcall.console.timeline";

    static final Duration KEEPALIVE = Duration.ofSeconds(15);
    private static final AtomicInteger COUNT = new AtomicInteger();

    private static final Logger log = LoggerFactory.getLogger(RollcallConsole.class);

    private final ConsoleServer server;
    private final EventStream events;
    private final AutoCloseable listening;
    private final InetSocketAddress address;
    private volatile boolean closed;

    private RollcallConsole(Builder b) throws IOException {
        SnapshotSource source = b.source;
        String name = source.name() + "-" + COUNT.incrementAndGet();
        Timeline timeline = new Timeline(b.timeline);
        FleetJson json = new FleetJson(source.name(), source::discoveryDescription, timeline);
        events = new EventStream(name, json, timeline, source::current, b.maxClients, KEEPALIVE);
        ConsoleHandler.Site site = new ConsoleHandler.Site(ConsoleHandler.pageResources(), source::current, json,
                events, b.hosts, b.requestTimeout.toNanos(), b.writeTimeout.toNanos(), b.hosted,
                b.allowRemote || b.hosted.isEmpty());
        try {
            server = new ConsoleServer(name, b.address, b.maxClients, b.writeTimeout, () -> new ConsoleHandler(site));
        } catch (IOException | RuntimeException e) {
            events.close();
            throw e;
        }
        address = server.address();
        listening = source.subscribe(events::offer);
        if (!b.address.getAddress().isLoopbackAddress() && b.hosts.allowed().isEmpty() && b.allowRemote) {
            log.warn("Rollcall console for resolver {} listens on {} but answers only requests for localhost or a"
                    + " loopback address: name the hosts it is reached by in {}", source.name(),
                    ConsoleHandler.authority(address), ALLOWED_HOSTS_KEY);
        }
        log.info("Rollcall console for resolver {} at {} (hosts: {})", source.name(), uri(), b.hosts);
    }

    /** Serves the page of {@code resolver} on {@code address} (port 0: any free port) with the defaults. */
    public static RollcallConsole serve(WorkerResolver resolver, InetSocketAddress address) {
        return builder(resolver).address(address).start();
    }

    /** A builder for a console of {@code resolver}; it listens on {@code 127.0.0.1}, any free port, by default. */
    public static Builder builder(WorkerResolver resolver) {
        return new Builder(SnapshotSource.of(Objects.requireNonNull(resolver, "resolver")));
    }

    /** A console of snapshots from elsewhere than a resolver (the scale measurement's). */
    static Builder builder(SnapshotSource source) {
        return new Builder(source);
    }

    /** The address it listens on (with the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return address;
    }

    /** The page's URL, e.g. {@code http://127.0.0.1:8470/}. */
    public URI uri() {
        return URI.create("http://" + ConsoleHandler.authority(address) + "/");
    }

    /** Connections open now (for tests of the doors). */
    int connections() {
        return server.connections();
    }

    /** How many event streams are open now. */
    public int eventStreams() {
        return events.clients();
    }

    /** Stops the listener, the server (closing every connection) and the console's threads. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            listening.close();
        } catch (Exception e) {
            log.debug("console: stopping its listener failed: {}", e.toString());
        }
        events.close();
        server.close();
    }

    @Override
    public String toString() {
        return "RollcallConsole[" + uri() + (closed ? ", closed" : "") + "]";
    }

    /** Collects a console's options; {@link #start()} checks them and serves. Not thread-safe. */
    public static final class Builder {
        /** How messages name a value given to the builder. */
        private static final String BUILDER = "RollcallConsole.Builder";
        private final SnapshotSource source;
        private InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        private boolean allowRemote;
        private int maxClients = ConsoleKeys.MAX_CLIENTS.defaultValue();
        private Duration writeTimeout = ConsoleKeys.WRITE_TIMEOUT.defaultValue();
        private Duration requestTimeout = ConsoleKeys.REQUEST_TIMEOUT.defaultValue();
        private HostRule hosts = HostRule.loopbackOnly();
        private int timeline = ConsoleKeys.TIMELINE.defaultValue();
        /** Paths a host serves beside the page ({@link InternalConsoleHost}); none for a console of its own. */
        private Map<String, InternalConsoleHost.Endpoint> hosted = Map.of();

        private Builder(SnapshotSource source) {
            this.source = source;
        }

        /** Where to listen; default {@code 127.0.0.1}, any free port. Must be resolved. */
        public Builder address(InetSocketAddress where) {
            this.address = Objects.requireNonNull(where, "address");
            return this;
        }

        /** Whether a non-loopback address may be bound ({@value #ALLOW_REMOTE_KEY}); default false. */
        public Builder allowRemote(boolean allow) {
            this.allowRemote = allow;
            return this;
        }

        /** How many event streams may be open at once, 1 to 1024 ({@value #MAX_CLIENTS_KEY}); default 16. */
        public Builder maxClients(int max) {
            this.maxClients = ConsoleKeys.MAX_CLIENTS.check(max, BUILDER);
            return this;
        }

        /** How long a connection may take none of what it is sent ({@value #WRITE_TIMEOUT_KEY}); default 10s. */
        public Builder writeTimeout(Duration timeout) {
            this.writeTimeout = ConsoleKeys.WRITE_TIMEOUT.check(timeout, BUILDER);
            return this;
        }

        /**
         * Host names or IP addresses, beside loopback's, that requests may name in their {@code Host}
         * ({@value #ALLOWED_HOSTS_KEY}); replaces earlier ones; default none.
         *
         * @throws ConfigurationException naming the key and the entry that is not a host name or an
         *         address (with a port or a wildcard, say)
         */
        public Builder allowedHosts(Collection<String> names) {
            Objects.requireNonNull(names, "allowedHosts");
            this.hosts = HostRule.allowing(names, String.join(",", names));
            return this;
        }

        /**
         * How long a connection's request head may take to arrive, from its opening or its last
         * answer, before it is closed ({@value #REQUEST_TIMEOUT_KEY}); default 5s.
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = ConsoleKeys.REQUEST_TIMEOUT.check(timeout, BUILDER);
            return this;
        }

        /** How many snapshots the timeline keeps, 1 to 1000 ({@value #TIMELINE_KEY}); default 50. */
        public Builder timeline(int snapshots) {
            this.timeline = ConsoleKeys.TIMELINE.check(snapshots, BUILDER);
            return this;
        }

        /**
         * Reads the {@code rollcall.console.*} keys that are set; an unknown one fails naming the
         * known ones (the resolver leaves these keys to the console).
         *
         * @throws ConfigurationException naming the key, its value and what was expected
         */
        public Builder config(RollcallConfig config) {
            Settings s = config.settings();
            List<String> known = new ConsoleKeys().keys().stream().map(SettingKey::name).toList();
            for (String key : config.values().keySet()) {
                if (key.startsWith("rollcall.console.") && !known.contains(key)) {
                    throw new ConfigurationException(key, "unknown Rollcall console key " + key + " ("
                            + config.origin(key) + "); the console's keys are " + String.join(", ", known));
                }
            }
            try {
                allowRemote = s.find(ConsoleKeys.ALLOW_REMOTE).orElse(allowRemote);
                maxClients = s.find(ConsoleKeys.MAX_CLIENTS).orElse(maxClients);
                writeTimeout = s.find(ConsoleKeys.WRITE_TIMEOUT).orElse(writeTimeout);
                requestTimeout = s.find(ConsoleKeys.REQUEST_TIMEOUT).orElse(requestTimeout);
                String names = s.raw(ALLOWED_HOSTS_KEY).orElse(null);
                if (names != null) {
                    hosts = HostRule.allowing(HostRule.split(names), names);
                }
                timeline = s.find(ConsoleKeys.TIMELINE).orElse(timeline);
            } catch (ConfigurationException e) {
                throw ConfigOrigins.named(e, config);
            }
            return this;
        }

        /** For {@link InternalConsoleHost}: serve {@code endpoints} too, on a port that may be remote. */
        Builder hosting(Map<String, InternalConsoleHost.Endpoint> endpoints) {
            this.hosted = endpoints;
            return this;
        }

        /**
         * Binds and serves.
         *
         * @throws ConfigurationException when the address is not loopback and remote binding was not
         *         allowed (naming {@value #ALLOW_REMOTE_KEY}), or it is unresolved
         * @throws UncheckedIOException when the address cannot be bound (in use, not local)
         */
        public RollcallConsole start() {
            if (address.isUnresolved()) {
                throw new ConfigurationException(ALLOW_REMOTE_KEY, "the console's address " + address.getHostString()
                        + " does not resolve");
            }
            // A host's port (rollcall serve) is remote by design; its page then answers only loopback peers.
            if (!address.getAddress().isLoopbackAddress() && !allowRemote && hosted.isEmpty()) {
                throw new ConfigurationException(ALLOW_REMOTE_KEY, "the console would listen on "
                        + ConsoleHandler.authority(address) + ", which is not a loopback address; the page has no"
                        + " authentication of its own, so set " + ALLOW_REMOTE_KEY + "=true (or"
                        + " RollcallConsole.Builder.allowRemote(true)) to serve it beyond this host");
            }
            try {
                return new RollcallConsole(this);
            } catch (IOException e) {
                throw new UncheckedIOException("the console cannot listen on " + ConsoleHandler.authority(address)
                        + ": " + e.getMessage(), e);
            }
        }
    }
}
