package dev.rollcall.core.internal.schema;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.rollcall.api.registry.ProtoSchema;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Fetches the schema a worker serves through gRPC server reflection ({@code grpc.reflection.v1}):
 * lists its services, asks for the file of each and for any dependency the answers lack, and
 * builds the descriptors in dependency order. One bidirectional call with one deadline; the
 * answers together may not exceed a size bound. Rollcall's own and gRPC's infrastructure services
 * ({@code grpc.reflection.*}, {@code grpc.health.*}, {@code rollcall.v1.*}, Arrow Flight's
 * {@code arrow.flight.protocol.*}) are left out.
 *
 * <p>Thread-safe; the future completes on a network thread.
 */
final class SchemaFetcher {

    private static final List<String> SKIPPED = List.of("grpc.reflection.", "grpc.health.", "rollcall.v1.",
            "arrow.flight.protocol.");

    private SchemaFetcher() {
    }

    /** Whether {@code service} is infrastructure that every worker serves, not part of its schema. */
    static boolean skipped(String service) {
        return SKIPPED.stream().anyMatch(service::startsWith);
    }

    /**
     * The schema served on {@code channel}. Fails with {@link io.grpc.StatusRuntimeException}
     * ({@code UNIMPLEMENTED} when the server has no reflection service), or with
     * {@link IllegalStateException} when the answers are inconsistent or too big.
     */
    static CompletableFuture<ProtoSchema> fetch(Channel channel, Duration timeout, int maxBytes) {
        Fetch fetch = new Fetch(maxBytes);
        ClientCalls.asyncBidiStreamingCall(channel.newCall(ServerReflectionGrpc.getServerReflectionInfoMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                        .withMaxInboundMessageSize(maxBytes)), fetch);
        fetch.start();
        return fetch.result;
    }

    /** Whether a fetch failed because the server serves no reflection. */
    static boolean isUnimplemented(Throwable failure) {
        Throwable t = failure;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED;
    }

    /** One conversation; gRPC calls an observer serially, the lock only guards against cancel races. */
    private static final class Fetch
            implements ClientResponseObserver<ServerReflectionRequest, ServerReflectionResponse> {
        final CompletableFuture<ProtoSchema> result = new CompletableFuture<>();
        private final int maxBytes;
        private final List<String> services = new ArrayList<>();
        private final Map<String, FileDescriptorProto> protos = new HashMap<>();
        private final Set<String> requested = new HashSet<>();
        private ClientCallStreamObserver<ServerReflectionRequest> requests;
        private int outstanding;
        private long bytes;

        Fetch(int maxBytes) {
            this.maxBytes = maxBytes;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<ServerReflectionRequest> stream) {
            this.requests = stream;
        }

        private void send(ServerReflectionRequest request) {
            outstanding++;
            requests.onNext(request);
        }

        @Override
        public synchronized void onNext(ServerReflectionResponse response) {
            if (result.isDone()) {
                return;
            }
            outstanding--;
            bytes += response.getSerializedSize();
            if (bytes > maxBytes) {
                fail(new IllegalStateException("the reflection answers exceed " + maxBytes
                        + " bytes (rollcall.schemas.max-response-bytes)"));
                return;
            }
            try {
                switch (response.getMessageResponseCase()) {
                    case LIST_SERVICES_RESPONSE -> {
                        for (ServiceResponse s : response.getListServicesResponse().getServiceList()) {
                            if (!skipped(s.getName())) {
                                services.add(s.getName());
                                send(ServerReflectionRequest.newBuilder().setFileContainingSymbol(s.getName())
                                        .build());
                            }
                        }
                    }
                    case FILE_DESCRIPTOR_RESPONSE -> {
                        List<FileDescriptorProto> received = new ArrayList<>();
                        for (ByteString b : response.getFileDescriptorResponse().getFileDescriptorProtoList()) {
                            FileDescriptorProto p = FileDescriptorProto.parseFrom(b);
                            protos.putIfAbsent(p.getName(), p);
                            received.add(p);
                        }
                        for (FileDescriptorProto p : received) {
                            for (String dependency : p.getDependencyList()) {
                                if (!protos.containsKey(dependency) && requested.add(dependency)) {
                                    send(ServerReflectionRequest.newBuilder().setFileByFilename(dependency).build());
                                }
                            }
                        }
                    }
                    case ERROR_RESPONSE -> throw new IllegalStateException("reflection answered "
                            + Status.fromCodeValue(response.getErrorResponse().getErrorCode()).getCode() + ": "
                            + response.getErrorResponse().getErrorMessage() + " (to "
                            + describe(response.getOriginalRequest()) + ")");
                    default -> throw new IllegalStateException("unexpected reflection answer "
                            + response.getMessageResponseCase());
                }
                if (outstanding == 0) {
                    requests.onCompleted();
                    result.complete(build());
                }
            } catch (InvalidProtocolBufferException | DescriptorValidationException | RuntimeException e) {
                fail(e);
            }
        }

        private void fail(Exception e) {
            result.completeExceptionally(e);
            requests.cancel("schema fetch failed", null);
        }

        private static String describe(ServerReflectionRequest r) {
            return switch (r.getMessageRequestCase()) {
                case FILE_BY_FILENAME -> "file " + r.getFileByFilename();
                case FILE_CONTAINING_SYMBOL -> "symbol " + r.getFileContainingSymbol();
                default -> r.getMessageRequestCase().toString();
            };
        }

        /** Builds every file after its dependencies, then finds the listed services in them. */
        private ProtoSchema build() throws DescriptorValidationException {
            Map<String, FileDescriptor> built = new HashMap<>();
            for (String name : protos.keySet()) {
                build(name, built, new HashSet<>());
            }
            Map<String, ServiceDescriptor> byName = new HashMap<>();
            for (FileDescriptor f : built.values()) {
                f.getServices().forEach(s -> byName.put(s.getFullName(), s));
            }
            List<ServiceDescriptor> served = new ArrayList<>();
            for (String s : services) {
                ServiceDescriptor d = byName.get(s);
                if (d == null) {
                    throw new IllegalStateException("service " + s + " is listed but no file defines it");
                }
                served.add(d);
            }
            return ProtoSchema.of(served);
        }

        private FileDescriptor build(String name, Map<String, FileDescriptor> built, Set<String> visiting)
                throws DescriptorValidationException {
            FileDescriptor done = built.get(name);
            if (done != null) {
                return done;
            }
            FileDescriptorProto proto = protos.get(name);
            if (proto == null) {
                throw new IllegalStateException("file " + name + " was not sent");
            }
            if (!visiting.add(name)) {
                throw new IllegalStateException("file " + name + " depends on itself");
            }
            FileDescriptor[] dependencies = new FileDescriptor[proto.getDependencyCount()];
            for (int i = 0; i < dependencies.length; i++) {
                dependencies[i] = build(proto.getDependency(i), built, visiting);
            }
            FileDescriptor file = FileDescriptor.buildFrom(proto, dependencies);
            built.put(name, file);
            return file;
        }

        @Override
        public synchronized void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public synchronized void onCompleted() {
            if (!result.isDone()) {
                result.completeExceptionally(new IllegalStateException(
                        "the reflection stream ended with " + outstanding + " questions unanswered"));
            }
        }

        /** Starts the conversation: list the services. */
        synchronized void start() {
            send(ServerReflectionRequest.newBuilder().setListServices("").build());
        }
    }
}
