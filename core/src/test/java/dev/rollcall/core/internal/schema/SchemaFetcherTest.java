package dev.rollcall.core.internal.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.StringValue;
import com.google.protobuf.WrappersProto;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.core.internal.probe.client.ProbeClient;
import dev.rollcall.worker.RollcallWorker;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Fetching a worker's schema over gRPC server reflection, with core's own class path. */
class SchemaFetcherTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private final ProbeClient client = ProbeClient.onSharedEventLoop(1 << 20);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** {@code test/echo.proto}: {@code service test.Echo { rpc Say(StringValue) returns (StringValue); }}. */
    private static FileDescriptor echoFile() throws Exception {
        FileDescriptorProto proto = FileDescriptorProto.newBuilder().setName("test/echo.proto").setPackage("test")
                .setSyntax("proto3").addDependency("google/protobuf/wrappers.proto")
                .addService(ServiceDescriptorProto.newBuilder().setName("Echo").addMethod(
                        MethodDescriptorProto.newBuilder().setName("Say")
                                .setInputType(".google.protobuf.StringValue")
                                .setOutputType(".google.protobuf.StringValue")))
                .build();
        return FileDescriptor.buildFrom(proto, new FileDescriptor[] {WrappersProto.getDescriptor()});
    }

    private static BindableService echo(FileDescriptor file) {
        MethodDescriptor<StringValue, StringValue> say = MethodDescriptor.<StringValue, StringValue>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Echo/Say")
                .setRequestMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance())).build();
        ServerServiceDefinition definition = ServerServiceDefinition.builder(ServiceDescriptor.newBuilder("test.Echo")
                        .setSchemaDescriptor((ProtoFileDescriptorSupplier) () -> file).addMethod(say).build())
                .addMethod(say, ServerCalls.asyncUnaryCall((request, response) -> {
                    response.onNext(request);
                    response.onCompleted();
                })).build();
        return () -> definition;
    }

    private ManagedChannel channelTo(RollcallWorker worker) {
        ManagedChannel channel = client.open(worker.endpoint());
        closeables.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        return channel;
    }

    @Test
    void fetchesTheServicesAndTheirDependencies() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.0.0").service(echo(echoFile())).start();
        closeables.add(worker);
        ProtoSchema schema = SchemaFetcher.fetch(channelTo(worker), TIMEOUT, 1 << 20).get(20, TimeUnit.SECONDS);

        // Rollcall's own services, Flight's and reflection itself are not part of the schema.
        assertThat(schema.services()).containsExactly("test.Echo");
        assertThat(schema.method("test.Echo", "Say").orElseThrow().getInputType().getFullName())
                .isEqualTo("google.protobuf.StringValue");
        assertThat(schema.file("google/protobuf/wrappers.proto")).isPresent();
        assertThat(schema.fileContainingSymbol("google.protobuf.StringValue").orElseThrow().getName())
                .isEqualTo("google/protobuf/wrappers.proto");
        // The worker advertises the gRPC service it was given, its methods as handlers.
        assertThat(worker.info().services()).anySatisfy(s -> {
            assertThat(s.name()).isEqualTo("test.Echo");
            assertThat(s.handlers()).extracting(h -> h.name()).containsExactly("Say");
        });
    }

    @Test
    void aServerWithoutReflectionAnswersUnimplemented() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.0.0").reflection(false)
                .service(echo(echoFile())).start();
        closeables.add(worker);
        assertThatThrownBy(() -> SchemaFetcher.fetch(channelTo(worker), TIMEOUT, 1 << 20).get(20, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .satisfies(e -> assertThat(SchemaFetcher.isUnimplemented(e.getCause())).isTrue());
    }

    @Test
    void answersBeyondTheSizeBoundFailTheFetch() throws Exception {
        RollcallWorker worker = RollcallWorker.builder().version("1.0.0").service(echo(echoFile())).start();
        closeables.add(worker);
        assertThatThrownBy(() -> SchemaFetcher.fetch(channelTo(worker), TIMEOUT, 256).get(20, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .satisfies(e -> assertThat(SchemaFetcher.isUnimplemented(e.getCause())).isFalse())
                .hasMessageContaining("256");
    }
}
