package dev.rollcall.discovery.consul;

import com.ecwid.consul.ConsulException;
import com.ecwid.consul.v1.OperationException;
import com.ecwid.consul.v1.agent.AgentConsulClient;
import com.ecwid.consul.v1.agent.model.NewService;
import com.google.gson.annotations.SerializedName;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.internal.DaemonLoop;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.http.impl.client.CloseableHttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's entry in Consul: a service instance with a TTL check that this registration keeps
 * passing. Made by {@link ConsulRegistrationProvider}; the worker side of {@code consul} discovery.
 *
 * <p><b>Life.</b> The instance is registered with the local agent with its check already
 * {@code passing}, so coordinators see it as soon as registration returns. A daemon thread named
 * {@value #THREAD_NAME} then marks the check passing every third of its TTL. If the worker dies
 * or hangs, the TTL runs out, the check turns critical and coordinators that watch passing
 * instances drop the worker; once it has been critical for {@code deregister-after}, Consul
 * removes the instance altogether. If the agent lost the instance (it was restarted without its
 * state, or reaped the instance while the worker was cut off), the next heartbeat registers it
 * again. A failing heartbeat is logged (once while it keeps failing) and retried on the next turn.
 *
 * <p><b>Shutdown.</b> {@link #close()} stops the heartbeat and deregisters the instance at once,
 * within {@code request-timeout}; a failure is logged, not thrown (the TTL removes it later).
 *
 * <p>Thread-safe. The ACL token is sent as a header only, and appears in no log, message or
 * {@code toString}.
 */
final class ConsulRegistration implements WorkerRegistration {

    /** The name of the heartbeat thread. */
    public static final String THREAD_NAME = "rollcall-consul-ttl";

    private static final Logger LOG = LoggerFactory.getLogger(ConsulRegistration.class);

    private final ConsulSettings connection;
    private final String worker;
    private final NewService definition;
    private final String serviceId;
    private final String checkId;
    private final Duration ttl;
    private final Duration deregisterAfter;

    private final Object lock = new Object();
    private State state = State.NEW;                // guarded by lock
    private CloseableHttpClient http;               // guarded by lock; set by start
    private AgentConsulClient agent;                // guarded by lock; set by start
    private DaemonLoop heartbeat;                   // guarded by lock; set by start
    private ScheduledFuture<?> beating;             // guarded by lock

    // Touched only by the heartbeat thread.
    private String heartbeatFailure;

    private enum State { NEW, STARTING, REGISTERED, CLOSED }

    private ConsulRegistration(ConsulSettings connection, String worker, NewService definition, Duration ttl,
                               Duration deregisterAfter) {
        this.connection = connection;
        this.worker = worker;
        this.definition = definition;
        this.serviceId = definition.getId();
        this.checkId = ((CheckWithId) definition.getCheck()).checkId;
        this.ttl = ttl;
        this.deregisterAfter = deregisterAfter;
    }

    /**
     * consul-api's check definition has no {@code CheckID}; Gson writes this subclass's field next
     * to the inherited ones (it serializes the runtime type).
     */
    static final class CheckWithId extends NewService.Check {
        @SerializedName("CheckID")
        private final String checkId;

        CheckWithId(String checkId) {
            this.checkId = checkId;
        }
    }

    /** The registration of {@code self}, not yet sent: no thread, no connection. */
    static ConsulRegistration of(WorkerInfo self, ConsulSettings connection, RegistrationSettings settings) {
        NewService service = new NewService();
        service.setId(settings.serviceId(self, connection.service()));
        service.setName(connection.service());
        service.setTags(settings.tags());
        service.setAddress(self.endpoint().host());
        service.setPort(self.endpoint().port());
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put(HealthEntries.SCHEME_META, self.endpoint().tls() ? "grpcs" : "grpc");
        if (!self.version().isEmpty() && connection.versionMeta().isPresent()) {
            meta.put(connection.versionMeta().get(), self.version());
        }
        if (!self.instanceId().isEmpty()) {
            meta.put("rollcall-instance", self.instanceId());
        }
        service.setMeta(meta);
        // The ID Consul would generate for a service's only check, but set explicitly: the heartbeat
        // addresses the check by it, and generated IDs are an implementation detail of the agent.
        CheckWithId check = new CheckWithId("service:" + service.getId());
        check.setTtl(goDuration(settings.checkTtl()));
        check.setDeregisterCriticalServiceAfter(goDuration(settings.deregisterAfter()));
        check.setStatus("passing");     // discoverable as soon as start() returns
        service.setCheck(check);
        return new ConsulRegistration(connection, self.endpoint().url(), service, settings.checkTtl(),
                settings.deregisterAfter());
    }

    /**
     * Registers the instance with the agent (blocking, within {@code request-timeout}) and starts
     * the heartbeat thread.
     *
     * @throws RegistrationException when the agent did not acknowledge; nothing is left running
     * @throws IllegalStateException when called a second time or after {@link #close()}
     */
    @Override
    public void start() {
        AgentConsulClient client;
        synchronized (lock) {
            if (state != State.NEW) {
                throw new IllegalStateException(what() + " was already " + (state == State.CLOSED ? "closed" : "started"));
            }
            state = State.STARTING;
            http = connection.newHttpClient(connection.requestTimeout());
            agent = new AgentConsulClient(connection.rawClient(http));
            client = agent;
        }
        try {
            client.agentServiceRegister(definition);
        } catch (ConsulException e) {
            synchronized (lock) {
                state = State.CLOSED;
            }
            release();
            throw new RegistrationException("cannot register " + definition.getAddress() + ":" + definition.getPort()
                    + " as " + what() + " with the agent at " + connection.address() + ": " + problem(e), e);
        }
        long period = Math.max(1, ttl.toMillis() / 3);
        boolean closedMeanwhile;
        synchronized (lock) {
            closedMeanwhile = state != State.STARTING;
            if (!closedMeanwhile) {
                state = State.REGISTERED;
                heartbeat = new DaemonLoop(THREAD_NAME);
                beating = heartbeat.scheduleWithFixedDelay(this::beat, period, period, TimeUnit.MILLISECONDS);
            }
        }
        if (closedMeanwhile) {
            // close() ran while the agent was registering us: it left the removal to this thread.
            try {
                client.agentServiceDeregister(serviceId);
            } catch (RuntimeException e) {
                LOG.warn("consul: deregistering {} after a close during start failed: {}", what(), problem(e));
            }
            release();
            return;
        }
        LOG.debug("consul: registered {}; heartbeat every {} ms", what(), period);
    }

    /** Runs on the heartbeat thread. */
    private void beat() {
        AgentConsulClient client = currentAgent();
        if (client == null) {
            return;
        }
        try {
            client.agentCheckPass(checkId);
            recovered();
        } catch (OperationException e) {
            if (isLost(e)) {
                registerAgain();
            } else {
                failed("marking check " + checkId + " passing failed: " + problem(e));
            }
        } catch (RuntimeException e) {
            failed("marking check " + checkId + " passing failed: " + problem(e));
        }
    }

    /** The agent no longer knows the check: it restarted without its state, or reaped the instance. */
    private static boolean isLost(OperationException e) {
        String body = e.getStatusContent() == null ? "" : e.getStatusContent();
        return e.getStatusCode() == 404 || body.contains("Unknown check") || body.contains("does not have associated TTL");
    }

    private void registerAgain() {
        AgentConsulClient client = currentAgent();
        if (client == null) {
            return;
        }
        LOG.warn("consul: worker {}: the agent at {} no longer has its instance, {} (deregistered by an operator,"
                + " the agent restarted without its state, or it reaped the instance while the worker was cut off);"
                + " registering it again", worker, connection.address(), what());
        try {
            client.agentServiceRegister(definition);
            heartbeatFailure = null;
            LOG.info("consul: worker {}: registered {} again", worker, what());
        } catch (RuntimeException e) {
            failed("registering again failed: " + problem(e));
        }
    }

    private void failed(String why) {
        String message = "consul: keeping " + what() + " alive: " + why;
        if (message.equals(heartbeatFailure)) {
            LOG.debug("{} (again)", message);
            return;
        }
        heartbeatFailure = message;
        LOG.warn("{}; retrying every {} ms; the check turns critical after {} without a heartbeat", message,
                Math.max(1, ttl.toMillis() / 3), ttl);
    }

    private void recovered() {
        if (heartbeatFailure != null) {
            heartbeatFailure = null;
            LOG.info("consul: heartbeats of {} reach the agent again", what());
        }
    }

    /** The agent client while registered, null once closing. */
    private AgentConsulClient currentAgent() {
        synchronized (lock) {
            return state == State.REGISTERED ? agent : null;
        }
    }

    /**
     * Deregisters the instance at once and stops the heartbeat, within {@code request-timeout}.
     * A failure is logged, not thrown: the TTL check removes the instance later. Before
     * {@link #start()} (or after it failed) there is nothing to remove. Idempotent.
     */
    @Override
    public void close() {
        DaemonLoop thread;
        AgentConsulClient client;
        synchronized (lock) {
            State was = state;
            state = State.CLOSED;
            if (was != State.REGISTERED) {
                // NEW: nothing was sent. STARTING: start() sees CLOSED, deregisters and releases.
                // CLOSED: done already.
                return;
            }
            beating.cancel(false);
            thread = heartbeat;
            client = agent;
        }
        // On the heartbeat thread, so it runs after a heartbeat in progress, never alongside it.
        Future<?> done = thread.submit(() -> {
            client.agentServiceDeregister(serviceId);
            return null;
        });
        Duration deadline = connection.requestTimeout();
        try {
            done.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
            LOG.info("consul: deregistered {}", what());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof OperationException gone && gone.getStatusCode() == 404) {
                // Consul treats an unknown service ID as a no-op; agents that answer 404 mean the same.
                LOG.info("consul: {} was already gone from the agent", what());
                return;
            }
            LOG.warn("consul: deregistering {} failed: {}; Consul removes it {} after its check turns critical",
                    what(), problem(e.getCause()), goDuration(deregisterAfter));
        } catch (TimeoutException e) {
            LOG.warn("consul: deregistering {} took longer than {}; giving up, Consul removes it {} after its check "
                    + "turns critical", what(), deadline, goDuration(deregisterAfter));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            release();
        }
    }

    /**
     * Stops heartbeats without deregistering, as a crashed worker would: for tests of what
     * coordinators see when a worker dies.
     */
    void abandon() {
        synchronized (lock) {
            state = State.CLOSED;
        }
        release();
    }

    private void release() {
        DaemonLoop thread;
        CloseableHttpClient client;
        synchronized (lock) {
            thread = heartbeat;
            client = http;
        }
        if (thread != null) {
            thread.shutdownNow();
            try {
                if (!thread.awaitEnded(connection.requestTimeout().toMillis())) {
                    LOG.warn("consul: thread {} of {} did not stop within {}; it is a daemon", THREAD_NAME, what(),
                            connection.requestTimeout());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (client != null) {
            try {
                client.close();
            } catch (IOException e) {
                LOG.debug("closing the HTTP client of {} failed", what(), e);
            }
        }
    }

    /** The service ID this worker is registered under. */
    public String serviceId() {
        return serviceId;
    }

    /** The ID of its TTL check: {@code service:<serviceId>}. */
    public String checkId() {
        return checkId;
    }

    /** E.g. {@code consul service 'workers' ID 'workers-10.0.0.7-7001' at http://127.0.0.1:8500 (TTL 10s, ...)}. */
    @Override
    public String description() {
        return what() + " at " + connection.address() + " (TTL check " + goDuration(ttl)
                + ", deregistered after " + goDuration(deregisterAfter) + " critical)";
    }

    @Override
    public String toString() {
        return description();
    }

    private String what() {
        return "consul service '" + connection.service() + "' ID '" + serviceId + "'";
    }

    private static String problem(Throwable e) {
        if (e instanceof OperationException op) {
            String body = op.getStatusContent() == null ? "" : PeerText.escape(op.getStatusContent().strip(), 200);
            String s = "HTTP " + op.getStatusCode() + (body.isEmpty() ? "" : " (" + body + ")");
            return op.getStatusCode() == 403 ? s + ": the ACL token needs service:write on the service" : s;
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + PeerText.escape(root.getMessage()));
    }

    /** Consul's (Go's) duration syntax: {@code 10s}, {@code 1500ms}, {@code 1m}. */
    static String goDuration(Duration d) {
        if (d.toMillisPart() == 0 && d.toNanosPart() == 0) {
            long s = d.toSeconds();
            return s % 60 == 0 && s > 0 ? (s / 60) + "m" : s + "s";
        }
        return d.toMillis() + "ms";
    }

    /** The keys under {@code registration.}; see {@link ConsulRegistrationProvider}. */
    record RegistrationSettings(Duration checkTtl, Duration deregisterAfter, String serviceIdOrNull,
                                List<String> tags) {

        String serviceId(WorkerInfo self, String service) {
            if (serviceIdOrNull != null) {
                return serviceIdOrNull;
            }
            // Stable across restarts of the same worker: a restart replaces its old entry.
            return (service + "-" + self.endpoint().host() + "-" + self.endpoint().port())
                    .replaceAll("[^A-Za-z0-9_.-]", "-");
        }
    }
}
