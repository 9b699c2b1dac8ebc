package dev.rollcall.testkit.consul;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stand-in for one Consul agent (and its server), speaking the parts of Consul's HTTP API that
 * service discovery and TTL-checked registration use, over real HTTP on {@code 127.0.0.1}. For
 * tests where a real agent cannot be installed.
 *
 * <p>What it serves, with Consul's JSON shapes, status codes and messages:
 * <ul>
 *   <li>{@code PUT /v1/agent/service/register} (TTL checks only, in {@code Check} or {@code Checks},
 *       with {@code Status}, {@code CheckID}, {@code DeregisterCriticalServiceAfter}; field names in any
 *       case or in snake_case, as Consul accepts them);</li>
 *   <li>{@code PUT /v1/agent/service/deregister/<id>} (an unknown ID is a no-op);</li>
 *   <li>{@code PUT /v1/agent/maintenance?enable=&reason=}: the node check {@code _node_maintenance};</li>
 *   <li>{@code PUT /v1/agent/check/pass|warn|fail/<checkId>?note=} and
 *       {@code PUT /v1/agent/check/update/<checkId>} with {@code {"Status","Output"}};</li>
 *   <li>{@code GET /v1/health/service/<name>?passing&tag=&node-meta=k:v&filter=&dc=&stale&consistent&index=&wait=}: health
 *       entries {@code {Node, Service, Checks}} with the node checks ({@code serfHealth},
 *       {@code _node_maintenance}) first, {@code ?passing} asking every check of the entry,
 *       node checks included, to pass; {@code filter} in Consul's expression language over
 *       {@code Node} and {@code Service} fields (see {@link FilterExpression}); {@code stale} and
 *       {@code consistent} accepted (one server: every read is consistent), not both; the
 *       {@code X-Consul-Index} header, and blocking:
 *       with {@code index > 0} the request waits until the service's index exceeds it or
 *       {@code wait} (default 5m, at most 10m, plus up to {@code wait/16} of random jitter) has
 *       passed, then answers with the current state;</li>
 *   <li>{@code GET /v1/status/leader}: the leader's server RPC address as a JSON string (no ACL
 *       needed, as in Consul).</li>
 * </ul>
 * A TTL check that is not updated within its TTL turns {@code critical} with output
 * {@code TTL expired}; a service whose check stayed critical for its
 * {@code DeregisterCriticalServiceAfter} is removed.
 *
 * <p>ACLs, when tokens are configured ({@link Builder#aclToken}, {@link Builder#aclPolicy}), work
 * as in Consul with {@code default_policy = "deny"}: the token comes as {@code X-Consul-Token},
 * {@code Authorization: Bearer} or {@code ?token=}; an unknown one gets 403 {@code ACL not found};
 * none means the anonymous token ({@link Builder#anonymousPolicy}, default: no rights). Reads
 * are not refused but filtered: entries whose service lacks {@code service:read} or whose node
 * lacks {@code node:read} are left out, with {@value #RESULTS_FILTERED_HEADER}{@code : true}
 * (masked for anonymous requests, as Consul does). Writes are refused with 403
 * {@code Permission denied: token with AccessorID '...' lacks permission '...'}: registering and
 * deregistering need {@code service:write}, check updates {@code node:write} and
 * {@code service:write}.
 *
 * <p>Where it differs from Consul: one node (the agent's own); only TTL checks; it reaps
 * critical services within ~25 ms of the deadline and allows a deregister-after below Consul's
 * 1-minute minimum (see {@link Builder#minDeregisterCriticalServiceAfter}); ACL rules are only
 * those on services and nodes, with exact and prefix matching (no intentions, roles, templated
 * policies or namespaces); every change advances one index, and a service name never seen reports the
 * current global index; check output changes are visible at once (Consul defers output-only
 * changes of TTL checks).
 *
 * <p>Test hooks: every request is recorded ({@link #requests()}, {@link #healthQueries(String)});
 * {@link #rewindIndex(long)} makes the index go backwards (as a snapshot restore does);
 * {@link #stop()} and {@link #restart()} take the agent away and bring it back on the same port,
 * keeping its state; {@link #injectRawInstance(String, String)} adds a raw JSON entry to a
 * service's health answer; {@link #answerBlockingQueriesAtOnce(boolean)} stops blocking;
 * {@link #advanceIndexOnEveryQuery(boolean)} plays a service under sustained churn;
 * {@link #changeAclPolicy(String, String)} edits a token's policy.
 *
 * <p>Thread-safe. {@link #close()} stops it for good.
 */
public final class ConsulStandIn implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConsulStandIn.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
    static final Duration MAX_WAIT = Duration.ofMinutes(10);
    private static final long TICK_MILLIS = 25;
    /** Set on a read whose results ACLs filtered (not for anonymous requests). */
    public static final String RESULTS_FILTERED_HEADER = "X-Consul-Results-Filtered-By-ACLs";

    private final AclTokens aclTokens;
    private final String datacenter;
    private final String nodeName;
    private final String nodeId = UUID.randomUUID().toString();
    private final String nodeAddress;
    private final Map<String, String> nodeMeta;
    private final Duration minDeregisterAfter;
    private final SSLContext sslContext;
    private final boolean needClientAuth;

    private final ExecutorService handlers;
    private final ScheduledExecutorService ticker;
    private final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
    private volatile boolean answerAtOnce;
    private volatile boolean churn;

    private final Object lock = new Object();
    // Everything below is guarded by lock.
    private long index = 1;
    private final Map<String, Long> serviceIndexes = new HashMap<>();
    private final Map<String, Service> services = new TreeMap<>();
    private final Map<String, Check> checks = new TreeMap<>();
    private final Map<String, List<String>> injected = new HashMap<>();
    private String serfStatus = "passing";          // the node's serfHealth check
    private long serfModifyIndex = 1;
    private String maintenanceReason;               // non-null: the node is in maintenance (_node_maintenance)
    private long maintenanceIndex;
    private HttpServer server;
    private int port;
    private boolean running;
    private boolean closed;
    private int generation;

    private ConsulStandIn(Builder b) {
        this.aclTokens = new AclTokens(b.aclTokens, b.anonymousRules);
        this.datacenter = b.datacenter;
        this.nodeName = b.nodeName;
        this.nodeAddress = b.nodeAddress;
        this.nodeMeta = Map.copyOf(b.nodeMeta);
        this.minDeregisterAfter = b.minDeregisterAfter;
        this.sslContext = b.sslContext;
        this.needClientAuth = b.needClientAuth;
        int n = INSTANCES.incrementAndGet();
        this.handlers = Executors.newCachedThreadPool(daemon("rollcall-consul-standin-" + n + "-http"));
        this.ticker = Executors.newSingleThreadScheduledExecutor(daemon("rollcall-consul-standin-" + n + "-ttl"));
    }

    /** A stand-in with defaults (no ACLs, datacenter {@code dc1}, plain HTTP), already listening. */
    public static ConsulStandIn start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- lifecycle

    private void listen() {
        HttpServer s = bind();
        s.setExecutor(handlers);
        s.createContext("/", this::handle);
        s.start();
        synchronized (lock) {
            server = s;
            port = s.getAddress().getPort();
            running = true;
            // A restarted agent restores its checks and gives each TTL a fresh period.
            long now = System.nanoTime();
            for (Check c : checks.values()) {
                c.deadline = now + c.ttl.toNanos();
                if (c.criticalSince >= 0) {
                    c.criticalSince = now;
                }
            }
        }
        log.debug("Consul stand-in listening on {}", address());
    }

    private HttpServer bind() {
        int wanted;
        synchronized (lock) {
            wanted = port;
        }
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), wanted);
                if (sslContext == null) {
                    return HttpServer.create(at, 64);
                }
                HttpsServer https = HttpsServer.create(at, 64);
                https.setHttpsConfigurator(new HttpsConfigurator(sslContext) {
                    @Override
                    public void configure(HttpsParameters params) {
                        SSLParameters p = getSSLContext().getDefaultSSLParameters();
                        p.setNeedClientAuth(needClientAuth);
                        params.setSSLParameters(p);
                    }
                });
                return https;
            } catch (BindException e) {
                // Restarting on the same port: the old socket may take a moment to go.
                if (wanted == 0 || System.nanoTime() > giveUp) {
                    throw new UncheckedIOException("cannot listen on 127.0.0.1:" + wanted, e);
                }
                Thread.onSpinWait();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot listen on 127.0.0.1:" + wanted, e);
            }
        }
    }

    /**
     * The agent goes away: the listening socket and every open connection (including blocked
     * queries) are closed at once; registrations, checks and the index are kept. TTLs do not run
     * out while it is stopped. Idempotent.
     */
    public void stop() {
        HttpServer s;
        synchronized (lock) {
            if (!running) {
                return;
            }
            running = false;
            generation++;
            s = server;
            server = null;
            lock.notifyAll();
        }
        s.stop(0);
        log.debug("Consul stand-in on port {} stopped", port);
    }

    /** Brings a {@link #stop() stopped} agent back on the same port with the state it had. */
    public void restart() {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the Consul stand-in was closed");
            }
            if (running) {
                return;
            }
        }
        listen();
    }

    /** Stops for good and releases its threads. Idempotent. */
    @Override
    public void close() {
        stop();
        synchronized (lock) {
            closed = true;
        }
        ticker.shutdownNow();
        handlers.shutdownNow();
    }

    /** Whether it is listening. */
    public boolean isRunning() {
        synchronized (lock) {
            return running;
        }
    }

    /** The agent's HTTP address, e.g. {@code http://127.0.0.1:41234} ({@code https://} with TLS). */
    public String address() {
        return (sslContext == null ? "http" : "https") + "://127.0.0.1:" + port();
    }

    /** The port, the same across {@link #stop()} and {@link #restart()}. */
    public int port() {
        synchronized (lock) {
            return port;
        }
    }

    /** The datacenter it answers for. */
    public String datacenter() {
        return datacenter;
    }

    /** The agent's node name, as health entries report it. */
    public String nodeName() {
        return nodeName;
    }

    // ---------------------------------------------------------------- test hooks

    /** The current (global) index. */
    public long index() {
        synchronized (lock) {
            return index;
        }
    }

    /**
     * Sets the index back to {@code to} (as a Raft snapshot restore does), for every service;
     * blocked queries whose index is now ahead of the server keep waiting, as in Consul.
     * {@code 0} reproduces the old Consul bug that answered {@code X-Consul-Index: 0}.
     */
    public void rewindIndex(long to) {
        if (to < 0) {
            throw new IllegalArgumentException("index " + to + " is negative");
        }
        synchronized (lock) {
            index = to;
            serviceIndexes.replaceAll((name, i) -> Math.min(i, to));
            lock.notifyAll();
        }
    }

    /**
     * Adds {@code rawJson} verbatim as one more entry of {@code service}'s health answers, whatever
     * the filters, and advances the index. For malformed-instance tests: it is not checked.
     */
    public void injectRawInstance(String service, String rawJson) {
        Objects.requireNonNull(rawJson, "rawJson");
        synchronized (lock) {
            injected.computeIfAbsent(Objects.requireNonNull(service, "service"), k -> new ArrayList<>()).add(rawJson);
            bump(service);
        }
    }

    /**
     * With {@code true}, blocking queries are answered at once with the unchanged index, as when a
     * proxy in between cuts long polls short or a server does not block: a client that does not
     * rate-limit its loop then spins.
     */
    public void answerBlockingQueriesAtOnce(boolean atOnce) {
        this.answerAtOnce = atOnce;
    }

    /**
     * Replaces the policy of a token configured with {@link Builder#aclPolicy} or
     * {@link Builder#aclToken}, as an operator editing the token's policy does; it applies from
     * the next request on (a blocked query is not woken: in Consul a policy change does not move a
     * service's index either).
     *
     * @throws IllegalArgumentException when the token is unknown or {@code rules} is not a policy
     */
    public void changeAclPolicy(String token, String rules) {
        aclTokens.change(token, AclRules.parse(Objects.requireNonNull(rules, "rules")));
    }

    /**
     * With {@code true}, every health query of a service advances its index and is answered at
     * once, as under sustained churn (a flapping check, a mass restart): a client that does not
     * rate-limit its loop then queries as fast as it can. Count the queries with
     * {@link #healthQueries(String)}.
     */
    public void advanceIndexOnEveryQuery(boolean advance) {
        this.churn = advance;
    }

    /**
     * Sets the node's {@code serfHealth} check: {@code false} plays the node's agent failing (the
     * servers mark it critical, output {@code Agent not live or unreachable}); its services stay
     * registered but are no longer passing. Node maintenance is the real endpoint,
     * {@code PUT /v1/agent/maintenance?enable=true&reason=}.
     */
    public void setNodeAlive(boolean alive) {
        synchronized (lock) {
            String status = alive ? "passing" : "critical";
            if (!status.equals(serfStatus)) {
                serfStatus = status;
                serfModifyIndex = bumpAll();
            }
        }
    }

    /** Every request received so far, oldest first. */
    public List<RecordedRequest> requests() {
        return List.copyOf(requests);
    }

    /** The requests received so far that match {@code filter}. */
    public long requestCount(Predicate<RecordedRequest> filter) {
        return requests.stream().filter(filter).count();
    }

    /** How many {@code GET /v1/health/service/<service>} requests arrived so far. */
    public long healthQueries(String service) {
        String path = "/v1/health/service/" + service;
        return requestCount(r -> r.method().equals("GET") && r.path().equals(path));
    }

    /** Every distinct ACL token received, by any of the three ways Consul accepts one. */
    public Set<String> tokensSeen() {
        Set<String> tokens = new LinkedHashSet<>();
        for (RecordedRequest r : requests) {
            String t = tokenOf(r);
            if (t != null) {
                tokens.add(t);
            }
        }
        return tokens;
    }

    /** The registered services, by ID. */
    public Map<String, RegisteredService> services() {
        synchronized (lock) {
            Map<String, RegisteredService> out = new TreeMap<>();
            services.forEach((id, s) -> out.put(id, s.snapshot()));
            return Collections.unmodifiableMap(out);
        }
    }

    /** The status of a check ({@code passing}, {@code warning}, {@code critical}), if it exists. */
    public Optional<String> checkStatus(String checkId) {
        synchronized (lock) {
            Check c = checks.get(checkId);
            return c == null ? Optional.empty() : Optional.of(c.status);
        }
    }

    // ---------------------------------------------------------------- HTTP

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getPath();
            String query = Objects.requireNonNullElse(exchange.getRequestURI().getRawQuery(), "");
            byte[] body = exchange.getRequestBody().readAllBytes();
            RecordedRequest request = new RecordedRequest(method, path, query, exchange.getRequestHeaders(),
                    Instant.now(), new String(body, StandardCharsets.UTF_8));
            requests.add(request);
            log.debug("Consul stand-in: {}", request);
            Reply reply;
            try {
                reply = route(request, body);
            } catch (RequestRefused e) {
                reply = Reply.text(e.status, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("Consul stand-in failed on {}", request, e);
                reply = Reply.text(500, "stand-in error: " + e);
            }
            if (reply == null) {
                return;     // stopped while the query blocked: the connection is being closed
            }
            byte[] bytes = reply.body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", reply.json ? "application/json" : "text/plain; charset=utf-8");
            if (reply.index >= 0) {
                exchange.getResponseHeaders().set("X-Consul-Index", Long.toString(reply.index));
                exchange.getResponseHeaders().set("X-Consul-KnownLeader", "true");
                exchange.getResponseHeaders().set("X-Consul-LastContact", "0");
            }
            if (reply.filteredByAcls) {
                exchange.getResponseHeaders().set(RESULTS_FILTERED_HEADER, "true");
            }
            exchange.sendResponseHeaders(reply.status, bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        } catch (IOException e) {
            log.debug("Consul stand-in: connection dropped: {}", e.toString());
        }
    }

    private Reply route(RecordedRequest r, byte[] body) throws IOException {
        String path = r.path();
        boolean put = r.method().equals("PUT");
        boolean get = r.method().equals("GET");
        AclTokens.Caller caller = aclTokens.caller(tokenOf(r));
        if (path.startsWith("/v1/health/service/")) {
            requireMethod(get, r);
            return health(path.substring("/v1/health/service/".length()), r, caller);
        }
        if (path.equals("/v1/agent/service/register")) {
            requireMethod(put, r);
            return register(body, caller);
        }
        if (path.equals("/v1/status/leader")) {
            requireMethod(get, r);
            return new Reply(200, "\"" + nodeAddress + ":8300\"", true, -1, false);    // Consul: no ACL needed
        }
        if (path.startsWith("/v1/agent/service/deregister/")) {
            requireMethod(put, r);
            return deregister(path.substring("/v1/agent/service/deregister/".length()), caller);
        }
        if (path.equals("/v1/agent/maintenance")) {
            requireMethod(put, r);
            caller.requireNodeWrite(nodeName);
            List<String> enable = r.queryParameter("enable");
            if (enable.isEmpty() || !Set.of("true", "false").contains(enable.get(0))) {
                return Reply.text(400, "Missing value for enable");
            }
            List<String> reason = r.queryParameter("reason");
            setNodeMaintenance(enable.get(0).equals("true"), reason.isEmpty() ? "" : reason.get(0));
            return Reply.text(200, "");
        }
        if (path.startsWith("/v1/agent/check/")) {
            String rest = path.substring("/v1/agent/check/".length());
            int slash = rest.indexOf('/');
            String verb = slash < 0 ? rest : rest.substring(0, slash);
            String checkId = slash < 0 ? "" : rest.substring(slash + 1);
            if (Set.of("pass", "warn", "fail", "update").contains(verb)) {
                requireMethod(put, r);
                if (verb.equals("update")) {
                    JsonObject o = ConsulJson.parseObject(body);
                    String status = ConsulJson.string(o, "Status");
                    if (status == null || !ServiceRegistration.STATUSES.contains(status)) {
                        throw new RequestRefused(400, "Invalid check status: \"" + status + "\"");
                    }
                    return updateCheck(checkId, status, Objects.requireNonNullElse(ConsulJson.string(o, "Output"), ""), caller);
                }
                String status = switch (verb) {
                    case "pass" -> "passing";
                    case "warn" -> "warning";
                    default -> "critical";
                };
                List<String> note = r.queryParameter("note");
                return updateCheck(checkId, status, note.isEmpty() ? "" : note.get(0), caller);
            }
        }
        return Reply.text(404, "404 page not found");
    }

    private static void requireMethod(boolean ok, RecordedRequest r) {
        if (!ok) {
            throw new RequestRefused(405, "method " + r.method() + " not allowed");
        }
    }

    private static String tokenOf(RecordedRequest r) {
        Optional<String> header = r.tokenHeader();
        if (header.isPresent() && !header.get().isEmpty()) {
            return header.get();
        }
        Optional<String> auth = r.header("Authorization");
        if (auth.isPresent() && auth.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            return auth.get().substring(7).strip();
        }
        List<String> query = r.queryParameter("token");
        return query.isEmpty() || query.get(0).isEmpty() ? null : query.get(0);
    }

    // ---------------------------------------------------------------- health

    private Reply health(String name, RecordedRequest r, AclTokens.Caller caller) {
        List<String> dc = r.queryParameter("dc");
        if (!dc.isEmpty() && !dc.get(0).isEmpty() && !dc.get(0).equals(datacenter)) {
            return Reply.text(500, "No path to datacenter");
        }
        boolean passing = false;
        List<String> passingParam = r.queryParameter("passing");
        if (!passingParam.isEmpty()) {
            // Consul: present without a value means true, else Go's strconv.ParseBool.
            String v = passingParam.get(0);
            if (v.isEmpty() || Set.of("1", "t", "T", "TRUE", "true", "True").contains(v)) {
                passing = true;
            } else if (!Set.of("0", "f", "F", "FALSE", "false", "False").contains(v)) {
                return Reply.text(400, "Invalid value for ?passing");
            }
        }
        List<String> tags = r.queryParameter("tag");
        Map<String, String> meta = new LinkedHashMap<>();
        for (String item : r.queryParameter("node-meta")) {
            int colon = item.indexOf(':');
            meta.put(colon < 0 ? item : item.substring(0, colon), colon < 0 ? "" : item.substring(colon + 1));
        }
        if (!r.queryParameter("stale").isEmpty() && !r.queryParameter("consistent").isEmpty()) {
            return Reply.text(400, "Cannot specify ?stale with ?consistent, conflicting semantics.");
        }
        FilterExpression filter = null;
        List<String> filterParam = r.queryParameter("filter");
        if (!filterParam.isEmpty() && !filterParam.get(0).isBlank()) {
            try {
                filter = FilterExpression.parse(filterParam.get(0));
            } catch (IllegalArgumentException e) {
                return Reply.text(400, "Failed to create boolean expression evaluator: " + e.getMessage());
            }
        }
        long minIndex = 0;
        List<String> indexParam = r.queryParameter("index");
        if (!indexParam.isEmpty()) {
            try {
                minIndex = Long.parseUnsignedLong(indexParam.get(0));
            } catch (NumberFormatException e) {
                return Reply.text(400, "Invalid index");
            }
        }
        Duration wait = DEFAULT_WAIT;
        List<String> waitParam = r.queryParameter("wait");
        if (!waitParam.isEmpty()) {
            wait = GoDuration.parse(waitParam.get(0));
            if (wait == null || wait.isNegative()) {
                return Reply.text(400, "Invalid wait time");
            }
        }
        if (wait.compareTo(MAX_WAIT) > 0 || wait.isZero()) {
            wait = wait.isZero() ? DEFAULT_WAIT : MAX_WAIT;
        }
        long jitter = wait.toNanos() / 16 > 0 ? ThreadLocalRandom.current().nextLong(wait.toNanos() / 16) : 0;
        long deadline = System.nanoTime() + wait.toNanos() + jitter;
        synchronized (lock) {
            int gen = generation;
            if (churn) {
                bump(name);
            }
            while (!answerAtOnce && minIndex > 0 && Long.compareUnsigned(serviceIndex(name), minIndex) <= 0) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 || gen != generation) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
            if (gen != generation || !running) {
                return null;
            }
            StringBuilder json = new StringBuilder("[");
            boolean filtered = false;
            for (Service s : services.values()) {
                if (!s.name.equals(name) || !s.tags.containsAll(tags) || !nodeMatches(meta)) {
                    continue;
                }
                List<Check> own = checksOf(s.id);
                // ?passing means every check of the entry, the node's (serfHealth, maintenance) included.
                if (passing && (!nodePassing() || own.stream().anyMatch(c -> !c.status.equals("passing")))) {
                    continue;
                }
                // As in Consul, ACLs filter what the query found: service:read on the service, node:read on its node.
                if (!caller.mayRead(name, nodeName)) {
                    filtered = true;
                    continue;
                }
                if (filter != null && !filter.matches(filterDocument(s))) {
                    continue;
                }
                if (json.length() > 1) {
                    json.append(',');
                }
                json.append(entry(s, own));
            }
            for (String raw : injected.getOrDefault(name, List.of())) {
                if (!caller.mayRead(name, injectedNode(raw))) {
                    filtered = true;
                    continue;
                }
                if (json.length() > 1) {
                    json.append(',');
                }
                json.append(raw);
            }
            json.append(']');
            // Consul masks the flag for anonymous requests, so as not to tell them that something exists.
            return new Reply(200, json.toString(), true, serviceIndex(name), filtered && !caller.anonymous());
        }
    }

    /** The node name of an injected entry, "" when it has none (a malformed entry). */
    private static String injectedNode(String raw) {
        try {
            JsonElement e = JsonParser.parseString(raw);
            JsonElement node = e.isJsonObject() ? e.getAsJsonObject().get("Node") : null;
            JsonElement name = node != null && node.isJsonObject() ? node.getAsJsonObject().get("Node") : null;
            return name != null && name.isJsonPrimitive() ? name.getAsString() : "";
        } catch (JsonParseException ex) {
            return "";
        }
    }

    /** Caller holds lock. */
    private boolean nodePassing() {
        return serfStatus.equals("passing") && maintenanceReason == null;
    }

    private void setNodeMaintenance(boolean enable, String reason) {
        synchronized (lock) {
            if (enable == (maintenanceReason != null)) {
                return;
            }
            maintenanceReason = enable ? (reason.isEmpty() ? "Maintenance mode is enabled for this node, but no "
                    + "reason was provided. This is a default message." : reason) : null;
            maintenanceIndex = bumpAll();
        }
    }

    /** Caller holds lock: a node check changed, which every service on the node sees. */
    private long bumpAll() {
        index++;
        services.values().forEach(s -> serviceIndexes.put(s.name, index));
        serviceIndexes.replaceAll((name, i) -> index);
        lock.notifyAll();
        return index;
    }

    /** The fields of an entry that {@code ?filter=} expressions select. */
    private Map<String, Object> filterDocument(Service s) {
        Map<String, Object> node = Map.of("ID", nodeId, "Node", nodeName, "Address", nodeAddress,
                "Datacenter", datacenter, "Meta", nodeMeta);
        Map<String, Object> service = Map.of("ID", s.id, "Service", s.name, "Tags", s.tags, "Address", s.address,
                "Port", Integer.toString(s.port), "Meta", s.meta);
        return Map.of("Node", node, "Service", service);
    }

    private boolean nodeMatches(Map<String, String> filter) {
        return filter.entrySet().stream().allMatch(e -> e.getValue().equals(nodeMeta.get(e.getKey())));
    }

    private long serviceIndex(String name) {
        Long i = serviceIndexes.get(name);
        return i == null ? index : i;
    }

    private List<Check> checksOf(String serviceId) {
        List<Check> out = new ArrayList<>();
        for (Check c : checks.values()) {
            if (c.serviceId.equals(serviceId)) {
                out.add(c);
            }
        }
        return out;
    }

    private String entry(Service s, List<Check> own) {
        JsonObject node = new JsonObject();
        node.addProperty("ID", nodeId);
        node.addProperty("Node", nodeName);
        node.addProperty("Address", nodeAddress);
        node.addProperty("Datacenter", datacenter);
        JsonObject tagged = new JsonObject();
        tagged.addProperty("lan", nodeAddress);
        tagged.addProperty("wan", nodeAddress);
        node.add("TaggedAddresses", tagged);
        node.add("Meta", ConsulJson.stringMap(nodeMeta));
        node.addProperty("CreateIndex", 1);
        node.addProperty("ModifyIndex", 1);

        JsonObject service = new JsonObject();
        service.addProperty("ID", s.id);
        service.addProperty("Service", s.name);
        service.add("Tags", ConsulJson.stringList(s.tags));
        service.addProperty("Address", s.address);
        service.add("Meta", ConsulJson.stringMap(s.meta));
        service.addProperty("Port", s.port);
        JsonObject weights = new JsonObject();
        weights.addProperty("Passing", 1);
        weights.addProperty("Warning", 1);
        service.add("Weights", weights);
        service.addProperty("EnableTagOverride", false);
        service.addProperty("CreateIndex", s.createIndex);
        service.addProperty("ModifyIndex", s.modifyIndex);

        JsonArray checkArray = new JsonArray();
        checkArray.add(ConsulJson.nodeCheck(nodeName, "serfHealth", "Serf Health Status", serfStatus, "",
                serfStatus.equals("passing") ? "Agent alive and reachable" : "Agent not live or unreachable",
                1, serfModifyIndex));
        if (maintenanceReason != null) {
            checkArray.add(ConsulJson.nodeCheck(nodeName, "_node_maintenance", "Node Maintenance Mode", "critical",
                    maintenanceReason, "", maintenanceIndex, maintenanceIndex));
        }
        for (Check c : own) {
            JsonObject check = new JsonObject();
            check.addProperty("Node", nodeName);
            check.addProperty("CheckID", c.id);
            check.addProperty("Name", c.name);
            check.addProperty("Status", c.status);
            check.addProperty("Notes", c.notes);
            check.addProperty("Output", c.output);
            check.addProperty("ServiceID", s.id);
            check.addProperty("ServiceName", s.name);
            check.add("ServiceTags", ConsulJson.stringList(s.tags));
            check.addProperty("Type", "ttl");
            check.addProperty("CreateIndex", c.createIndex);
            check.addProperty("ModifyIndex", c.modifyIndex);
            checkArray.add(check);
        }
        JsonObject entry = new JsonObject();
        entry.add("Node", node);
        entry.add("Service", service);
        entry.add("Checks", checkArray);
        return entry.toString();
    }

    // ---------------------------------------------------------------- agent endpoints

    private Reply register(byte[] body, AclTokens.Caller caller) {
        ServiceRegistration def = ServiceRegistration.parse(body);
        caller.requireServiceWrite(def.name());
        String id = def.id();
        String name = def.name();
        List<Check> newChecks = new ArrayList<>();
        for (ServiceRegistration.CheckDefinition c : def.checks()) {
            newChecks.add(new Check(c.id(), c.name(), id, name, c.ttl(), c.status(), c.notes(), c.deregisterAfter()));
        }
        synchronized (lock) {
            Service old = services.get(id);
            long at = bump(name);
            if (old != null && !old.name.equals(name)) {
                bump(old.name);
            }
            Service s = new Service(id, name, def.tags(), def.address(), def.port(), def.meta());
            s.createIndex = old == null ? at : old.createIndex;
            s.modifyIndex = at;
            services.put(id, s);
            Map<String, Check> previous = new HashMap<>();
            checks.values().removeIf(c -> {
                if (c.serviceId.equals(id)) {
                    previous.put(c.id, c);
                    return true;
                }
                return false;
            });
            long now = System.nanoTime();
            for (Check c : newChecks) {
                Check before = previous.get(c.id);
                if (before != null) {
                    // Consul keeps a re-registered check's state, so that re-registering does not flap.
                    c.status = before.status;
                    c.output = before.output;
                    c.criticalSince = before.criticalSince;
                    c.createIndex = before.createIndex;
                } else {
                    c.createIndex = at;
                    c.criticalSince = c.status.equals("critical") ? now : -1;
                }
                c.modifyIndex = at;
                c.deadline = now + c.ttl.toNanos();
                checks.put(c.id, c);
            }
        }
        log.debug("Consul stand-in: registered service {} ({}) at {}:{} with {} check(s)", id, name, def.address(),
                def.port(), newChecks.size());
        return Reply.text(200, "");
    }

    private Reply deregister(String id, AclTokens.Caller caller) {
        synchronized (lock) {
            Service s = services.get(id);
            if (s == null) {
                return Reply.text(200, "");     // Consul: deregistering an unknown service is a no-op
            }
            caller.requireServiceWrite(s.name);
            services.remove(id);
            checks.values().removeIf(c -> c.serviceId.equals(id));
            bump(s.name);
        }
        log.debug("Consul stand-in: deregistered service {}", id);
        return Reply.text(200, "");
    }

    private Reply updateCheck(String checkId, String status, String output, AclTokens.Caller caller) {
        synchronized (lock) {
            Check c = checks.get(checkId);
            if (c == null) {
                return Reply.text(404, "Unknown check ID \"" + checkId
                        + "\". Ensure that the check ID is passed, not the check name.");
            }
            // Consul's agent check endpoints list node:write and service:write; both are asked here.
            caller.requireNodeWrite(nodeName);
            caller.requireServiceWrite(c.serviceName);
            c.deadline = System.nanoTime() + c.ttl.toNanos();
            setStatus(c, status, output);
        }
        return Reply.text(200, "");
    }

    /** Caller holds lock. */
    private void setStatus(Check c, String status, String output) {
        if (c.status.equals(status) && c.output.equals(output)) {
            return;     // nothing changed: no write, no index change (as in Consul)
        }
        if (!c.status.equals(status)) {
            c.criticalSince = status.equals("critical") ? System.nanoTime() : -1;
        }
        c.status = status;
        c.output = output;
        c.modifyIndex = bump(c.serviceName);
    }

    /** Caller holds lock. */
    private long bump(String serviceName) {
        index++;
        serviceIndexes.put(serviceName, index);
        lock.notifyAll();
        return index;
    }

    private void tick() {
        List<String> reaped = new ArrayList<>();
        synchronized (lock) {
            if (!running) {
                return;
            }
            long now = System.nanoTime();
            for (Check c : checks.values()) {
                if (!c.status.equals("critical") && now - c.deadline > 0) {
                    setStatus(c, "critical", "TTL expired");
                    log.debug("Consul stand-in: check {} of service {} missed its TTL of {}", c.id, c.serviceId, c.ttl);
                }
            }
            for (Check c : List.copyOf(checks.values())) {
                if (c.deregisterAfter == null || c.criticalSince < 0 || !services.containsKey(c.serviceId)) {
                    continue;
                }
                Duration after = c.deregisterAfter.compareTo(minDeregisterAfter) < 0 ? minDeregisterAfter : c.deregisterAfter;
                if (now - c.criticalSince >= after.toNanos()) {
                    Service s = services.remove(c.serviceId);
                    checks.values().removeIf(x -> x.serviceId.equals(s.id));
                    bump(s.name);
                    reaped.add(s.id);
                }
            }
        }
        reaped.forEach(id -> log.debug("Consul stand-in: deregistered critical service {}", id));
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static final class Service {
        final String id;
        final String name;
        final List<String> tags;
        final String address;
        final int port;
        final Map<String, String> meta;
        long createIndex;
        long modifyIndex;

        Service(String id, String name, List<String> tags, String address, int port, Map<String, String> meta) {
            this.id = id;
            this.name = name;
            this.tags = List.copyOf(tags);
            this.address = address;
            this.port = port;
            this.meta = Map.copyOf(meta);
        }

        RegisteredService snapshot() {
            return new RegisteredService(id, name, tags, address, port, meta);
        }
    }

    private static final class Check {
        final String id;
        final String name;
        final String serviceId;
        final String serviceName;
        final Duration ttl;
        final String notes;
        final Duration deregisterAfter;
        String status;
        String output = "";
        long deadline;
        long criticalSince = -1;
        long createIndex;
        long modifyIndex;

        Check(String id, String name, String serviceId, String serviceName, Duration ttl, String status, String notes,
              Duration deregisterAfter) {
            this.id = id;
            this.name = name;
            this.serviceId = serviceId;
            this.serviceName = serviceName;
            this.ttl = ttl;
            this.status = status;
            this.notes = notes;
            this.deregisterAfter = deregisterAfter;
        }
    }

    private record Reply(int status, String body, boolean json, long index, boolean filteredByAcls) {
        static Reply text(int status, String body) {
            return new Reply(status, body, false, -1, false);
        }
    }


    /**
     * Configures a stand-in. Not thread-safe; {@link #start()} copies everything.
     */
    public static final class Builder {
        private final Map<String, AclRules> aclTokens = new LinkedHashMap<>();
        private AclRules anonymousRules = AclRules.NONE;
        private String datacenter = "dc1";
        private String nodeName = "rollcall-standin";
        private String nodeAddress = "127.0.0.1";
        private Map<String, String> nodeMeta = Map.of();
        private Duration minDeregisterAfter = Duration.ZERO;
        private SSLContext sslContext;
        private boolean needClientAuth;

        private Builder() {
        }

        /**
         * Turns ACLs on (as {@code default_policy = "deny"}) with {@code token} as a management token
         * that may do everything. Default: no ACLs. Any other token is refused with 403
         * {@code ACL not found}; a request without one is anonymous (see {@link #anonymousPolicy}).
         */
        public Builder aclToken(String token) {
            aclTokens.put(Objects.requireNonNull(token, "token"), AclRules.ALL);
            return this;
        }

        /**
         * Turns ACLs on and adds {@code token} with a policy in Consul's rule syntax, e.g.
         * {@code service "workers" { policy = "write" } node_prefix "" { policy = "read" }}. The
         * stand-in checks {@code service}, {@code service_prefix}, {@code node} and
         * {@code node_prefix} rules: reads are filtered (200 with
         * {@value #RESULTS_FILTERED_HEADER}: true), writes refused with 403.
         *
         * @throws IllegalArgumentException when {@code rules} is not in that syntax
         */
        public Builder aclPolicy(String token, String rules) {
            aclTokens.put(Objects.requireNonNull(token, "token"), AclRules.parse(Objects.requireNonNull(rules, "rules")));
            return this;
        }

        /** The anonymous token's policy while ACLs are on; default none (every read filtered, every write refused). */
        public Builder anonymousPolicy(String rules) {
            this.anonymousRules = AclRules.parse(Objects.requireNonNull(rules, "rules"));
            return this;
        }

        /** The datacenter it answers for; default {@code dc1}. Queries for another get Consul's 500. */
        public Builder datacenter(String datacenter) {
            this.datacenter = Objects.requireNonNull(datacenter, "datacenter");
            return this;
        }

        /** The agent's node name; default {@code rollcall-standin}. */
        public Builder nodeName(String name) {
            this.nodeName = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The node address, used by services registered without one; default {@code 127.0.0.1}. */
        public Builder nodeAddress(String address) {
            this.nodeAddress = Objects.requireNonNull(address, "address");
            return this;
        }

        /** The node's meta, matched by {@code node-meta} filters; default none. */
        public Builder nodeMeta(Map<String, String> meta) {
            this.nodeMeta = Map.copyOf(meta);
            return this;
        }

        /**
         * The least {@code DeregisterCriticalServiceAfter} honoured; default zero, so tests can use
         * seconds. Consul's is one minute: {@code Duration.ofMinutes(1)} behaves like it.
         */
        public Builder minDeregisterCriticalServiceAfter(Duration min) {
            if (min.isNegative()) {
                throw new IllegalArgumentException("minDeregisterCriticalServiceAfter " + min + " is negative");
            }
            this.minDeregisterAfter = min;
            return this;
        }

        /** Serves HTTPS with this context (its key manager holds the server certificate). */
        public Builder https(SSLContext context) {
            this.sslContext = Objects.requireNonNull(context, "context");
            return this;
        }

        /** With {@link #https}, requires a client certificate the context's trust manager accepts. */
        public Builder requireClientCertificate(boolean require) {
            this.needClientAuth = require;
            return this;
        }

        /** Starts listening on a free port of {@code 127.0.0.1}. */
        public ConsulStandIn start() {
            if (needClientAuth && sslContext == null) {
                throw new IllegalStateException("requireClientCertificate needs https(SSLContext)");
            }
            ConsulStandIn standIn = new ConsulStandIn(this);
            standIn.listen();
            standIn.ticker.scheduleWithFixedDelay(standIn::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
            return standIn;
        }
    }
}
