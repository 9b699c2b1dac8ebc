package dev.rollcall.core.internal.calls;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.internal.LiveResolvers;
import dev.rollcall.core.internal.fleet.UserCalls;
import dev.rollcall.core.internal.serial.SerialContext;
import dev.rollcall.core.internal.settings.ProbeSettings;
import dev.rollcall.core.internal.snapshot.SnapshotSummary;
import dev.rollcall.core.internal.snapshot.Subscription;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resolver's side of the user's calls to workers: the {@code rollcall:} target and what its
 * channels ask (verification, snapshots, the news that the resolver closed), shared channels, and
 * failed calls (ejection). Everything that changes the fleet is handed to the tracker on the serial
 * context; nothing here blocks except {@link #channel}, briefly. Thread-safe.
 */
public final class CallPath implements LiveResolvers.Handle {

    private static final Logger log = LoggerFactory.getLogger(CallPath.class);
    private static final String SERVICE_NAME = "[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*";

    private final String id;
    private final String resolver;
    private final SerialContext context;
    private final UserCalls fleet;
    private final Supplier<FleetSnapshot> current;
    private final BooleanSupplier closed;
    private final Function<Consumer<FleetSnapshot>, Subscription> listeners;
    private final ProbeSettings probe;
    /** The resolver's configuration: its rollcall: channels read their own keys from it. */
    private final Settings config;
    /** Told when the resolver closes: the rollcall: channels, so that their calls fail at once. */
    private final List<Runnable> onClosed = new CopyOnWriteArrayList<>();
    /** Where the user's calls on shared channels take their callbacks: made with the first shared channel. */
    private UserCallExecutor userCalls; // guarded by this

    public CallPath(String resolver, int sequence, SerialContext context, UserCalls fleet, Supplier<FleetSnapshot> current,
             BooleanSupplier closed, Function<Consumer<FleetSnapshot>, Subscription> listeners,
             ProbeSettings probe, Settings config) {
        this.id = resolver.replaceAll("[^A-Za-z0-9._~-]", "-") + "-" + sequence;
        this.resolver = resolver;
        this.context = context;
        this.fleet = fleet;
        this.current = current;
        this.closed = closed;
        this.listeners = listeners;
        this.probe = probe;
        this.config = config;
    }

    public String grpcTarget() {
        if (NameResolverRegistry.getDefaultRegistry().getProviderForScheme("rollcall") == null) {
            throw new IllegalStateException("grpcTarget(): the rollcall: scheme is not registered; the rollcall:"
                    + " target comes with dev.rollcall:rollcall-grpc, which is not on the class path (core alone"
                    + " gives channel(endpoint) and the snapshots)");
        }
        return "rollcall://" + id + "/";
    }

    public String grpcTarget(String service) {
        if (service == null || !service.matches(SERVICE_NAME)) {
            throw new IllegalArgumentException("grpcTarget service '" + service
                    + "' is not a fully qualified gRPC service name such as demo.v1.Orders");
        }
        return grpcTarget() + service;
    }

    /**
     * {@code UNAVAILABLE} ejects the worker ({@link UserCalls#callFailed}); {@code DEADLINE_EXCEEDED}
     * makes it a suspect that is probed at once ({@link UserCalls#callTimedOut}); other codes are the
     * call's own business.
     */
    public void reportFailure(WorkerEndpoint endpoint, Status status) {
        if (!reported(status.getCode()) || closed.getAsBoolean()) {
            return;
        }
        String why = status.getCode() + (status.getDescription() == null ? ""
                : ": " + PeerText.escape(status.getDescription()));
        String url = endpoint.url();
        if (status.getCode() == Status.Code.UNAVAILABLE) {
            callFailed(url, why);
        } else {
            context.execute(() -> fleet.callTimedOut(url, why));
        }
    }

    /** Whether a call that ended with {@code code} says something about its worker. */
    static boolean reported(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
    }

    public ClientInterceptor callObserver() {
        return new FailedCallObserver(current, this::reportFailure);
    }

    public ManagedChannel channel(WorkerEndpoint endpoint) {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("resolver " + resolver + " is closed");
        }
        CompletableFuture<ManagedChannel> shared = new CompletableFuture<>();
        context.execute(() -> shared.complete(fleet.share(endpoint.url())));
        ManagedChannel channel;
        try {
            channel = shared.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking resolver " + resolver + " for a channel", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("resolver " + resolver + " did not hand out a channel to "
                    + endpoint.url() + " (closed meanwhile?)", e);
        }
        if (channel == null) {
            throw new IllegalArgumentException("worker " + endpoint.url() + " is not a candidate of resolver " + resolver);
        }
        return new SharedChannel(channel, resolver, userCalls());
    }

    private synchronized UserCallExecutor userCalls() {
        if (userCalls == null) {
            userCalls = new UserCallExecutor("rollcall-calls-" + resolver);
        }
        return userCalls;
    }

    /** The resolver closed: tell the channels, stop the user calls' threads (their channels are closed). */
    public void resolverClosed() {
        UserCallExecutor calls;
        synchronized (this) {
            calls = userCalls;
        }
        if (calls != null) {
            calls.close();
        }
        for (Runnable r : onClosed) {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.warn("resolver {}: a gRPC channel failed to take the news that it closed", resolver, e);
            }
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public FleetSnapshot current() {
        return current.get();
    }

    @Override
    public AutoCloseable listen(Consumer<FleetSnapshot> listener, Runnable onClose) {
        Subscription registration = listeners.apply(listener);
        onClosed.add(onClose);
        return () -> {
            onClosed.remove(onClose);
            registration.close();
        };
    }

    @Override
    public boolean closed() {
        return closed.getAsBoolean();
    }

    @Override
    public CompletableFuture<Boolean> verify(String url) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        if (closed.getAsBoolean()) {
            result.complete(false);
        } else {
            context.execute(() -> fleet.verify(url, result));
        }
        return result;
    }

    @Override
    public Duration probeTimeout() {
        return probe.timeout();
    }

    @Override
    public int maxAnswerBytes() {
        return probe.maxResponseBytes();
    }

    @Override
    public Settings settings() {
        return config;
    }

    @Override
    public void callFailed(String url, String why) {
        if (!closed.getAsBoolean()) {
            context.execute(() -> fleet.callFailed(url, why));
        }
    }

    @Override
    public String whyNone(FleetSnapshot snapshot) {
        return "no compatible worker: have " + SnapshotSummary.of(snapshot);
    }
}
