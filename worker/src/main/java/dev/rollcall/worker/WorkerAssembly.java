package dev.rollcall.worker;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.internal.NamedThreads;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.auth.ServerAuthHandler;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a {@link RollcallWorker} together from its {@link WorkerOptions}: the services it serves
 * and advertises, the Arrow allocator and Flight executor, the one gRPC server, then the
 * registration. What it made is released again when a later step fails. Used on the starting thread.
 */
final class WorkerAssembly {

    private static final Logger log = LoggerFactory.getLogger(WorkerAssembly.class);
    private static final AtomicInteger SERVERS = new AtomicInteger();

    private WorkerAssembly() {
    }

    /** See {@link RollcallWorker.Builder#start()}. */
    static RollcallWorker start(WorkerOptions options) throws IOException {
        WorkerOptions.Resolved settings = options.resolve();
        List<ServerServiceDefinition> definitions = userServices(options);
        WorkerRegistrar registrar = WorkerRegistrar.find(settings, options.classLoader);
        CallsInFlight calls = new CallsInFlight();
        settings.limits().applyTo(options.info);
        WorkerInfoService infoService = options.info.holdersChanged(calls::wake).build();
        BufferAllocator own = options.allocator == null ? new RootAllocator() : null;
        BufferAllocator alloc = options.allocator != null ? options.allocator : own;
        ArrowMemory.checkCanAllocate(alloc, own);
        int n = SERVERS.incrementAndGet();
        LoggingFlightProducer flight = new LoggingFlightProducer(
                options.producer != null ? options.producer : new NoOpFlightProducer(), "rollcall-worker-" + n);
        ExecutorService executor = Executors.newCachedThreadPool(NamedThreads.daemon("rollcall-worker-" + n));
        List<ServerServiceDefinition> served = new ArrayList<>();
        served.add(infoService.bindService());
        served.add(FlightGrpcUtils.createFlightService(alloc, flight, ServerAuthHandler.NO_OP, executor).bindService());
        served.addAll(definitions);
        if (settings.reflection()) {
            served.add(ProtoReflectionServiceV1.newInstance().bindService());
        }
        List<ServerInterceptor> around = new ArrayList<>(options.interceptors);
        around.add(calls);
        WorkerServer server = WorkerServer.start("rollcall-worker-" + n, settings.host(), settings.port(),
                settings.tls(), settings.limits(), executor, own, served, around);
        WorkerEndpoint endpoint = new WorkerEndpoint(settings.advertised(), server.port(), settings.tls() != null,
                Map.of());
        flight.worker(endpoint.url());
        log.debug("worker {} version '{}' instance {} started{}", endpoint.url(), infoService.version(),
                infoService.instanceId(), settings.tls() == null ? "" : " with " + settings.tls());
        WorkerDrain drain = new WorkerDrain(infoService, calls, endpoint.url(), settings.shutdownGraceMillis(),
                settings.drainQuietMillis());
        RollcallWorker worker = new RollcallWorker(server, infoService, endpoint, calls, drain, registrar);
        try {
            registrar.register(worker);
        } catch (RuntimeException e) {
            worker.close();
            throw e;
        }
        return worker;
    }

    /**
     * The user's gRPC services, bound; each is advertised as a public service whose handlers are
     * its methods unless a service of its name was advertised explicitly.
     */
    private static List<ServerServiceDefinition> userServices(WorkerOptions options) {
        List<ServerServiceDefinition> definitions = new ArrayList<>();
        for (BindableService service : options.services) {
            ServerServiceDefinition definition = service.bindService();
            definitions.add(definition);
            String name = definition.getServiceDescriptor().getName();
            if (options.advertisedServices.add(name)) {
                options.info.service(new ServiceInfo(name, Visibility.PUBLIC,
                        definition.getMethods().stream()
                                .map(m -> m.getMethodDescriptor().getBareMethodName())
                                .filter(Objects::nonNull).sorted()
                                .map(HandlerInfo::of).toList()));
            }
        }
        return definitions;
    }
}
