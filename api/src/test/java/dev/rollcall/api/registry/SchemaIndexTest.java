package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A snapshot's schemas: kept for the versions that answered, looked up in the newest compatible one. */
class SchemaIndexTest {

    private static final KeyPaths KEYS = KeyPaths.of(Map.of("k.Keys.Get", "req.id"));

    private static ProtoSchema schema(String fileName) throws Exception {
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName(fileName).setPackage("k")
                .setSyntax("proto3")
                .addMessageType(DescriptorProto.newBuilder().setName("Req"))
                .addService(ServiceDescriptorProto.newBuilder().setName("Keys").addMethod(MethodDescriptorProto
                        .newBuilder().setName("Get").setInputType(".k.Req").setOutputType(".k.Req")))
                .build();
        return ProtoSchema.of(List.of(FileDescriptor.buildFrom(file, new FileDescriptor[0]).findServiceByName("Keys")));
    }

    private static WorkerInfo worker(int port, String version) {
        return WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", port), version);
    }

    @Test
    void keepsTheSchemasOfAnsweredVersionsAndLooksUpInTheNewestCompatibleOne() throws Exception {
        ProtoSchema old = schema("old.proto");
        ProtoSchema current = schema("current.proto");
        ProtoSchema gone = schema("gone.proto");
        SchemaIndex index = new SchemaIndex(Set.of("1.0.0", "2.0.0", "3.0.0"),
                Set.of("1.0.0", "2.0.0"), // the compatible workers' versions
                Map.of("1.0.0", old, "2.0.0", current, "9.0.0", gone), KEYS);

        assertThat(index.byVersion()).containsOnlyKeys("1.0.0", "2.0.0");
        assertThat(index.file("current.proto")).isPresent();
        assertThat(index.file("old.proto")).as("found in the older schema when the newest lacks it").isPresent();
        assertThat(index.file("gone.proto")).isEmpty();
        assertThat(index.fileContainingSymbol("k.Req").map(FileDescriptor::getName)).contains("current.proto");
        assertThat(index.method("k.Keys", "Get")).isPresent();
        assertThat(index.protoServices()).containsExactly("k.Keys");
        assertThat(index.keys()).isEqualTo(KEYS);
        assertThat(index.keyPath("k.Keys", "Get")).contains("req.id");
        assertThat(index.keyPath("k.Keys", "Put")).isEmpty();
    }

    @Test
    void aWorkerHasTheSchemaOfItsVersionOnlyOnceItAnswered() throws Exception {
        ProtoSchema s = schema("k.proto");
        SchemaIndex index = new SchemaIndex(Set.of("1.0.0"), Set.of("1.0.0"), Map.of("1.0.0", s),
                KeyPaths.none());
        WorkerInfo info = worker(7001, "1.0.0");

        assertThat(index.forWorker(Optional.of(new WorkerStatus(info.endpoint(), WorkerStatus.State.COMPATIBLE, "",
                Optional.of(info))))).contains(s);
        assertThat(index.forWorker(Optional.of(new WorkerStatus(info.endpoint(), WorkerStatus.State.REJECTED, "no",
                Optional.of(info))))).contains(s);
        assertThat(index.forWorker(Optional.of(new WorkerStatus(info.endpoint(), WorkerStatus.State.UNREACHABLE,
                "refused", Optional.of(info))))).isEmpty();
        assertThat(index.forWorker(Optional.empty())).isEmpty();
    }

    @Test
    void equalWhenTheSameSchemasAndKeys() throws Exception {
        ProtoSchema s = schema("k.proto");
        Set<String> workers = Set.of("1.0.0");
        SchemaIndex a = new SchemaIndex(Set.of("1.0.0"), workers, Map.of("1.0.0", s), KEYS);
        SchemaIndex same = new SchemaIndex(Set.of("1.0.0"), workers, Map.of("1.0.0", s), KEYS);

        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same)
                .isNotEqualTo(new SchemaIndex(Set.of("1.0.0"), workers, Map.of("1.0.0", s), KeyPaths.none()))
                .isNotEqualTo(new SchemaIndex(Set.of("1.0.0"), workers, Map.of(), KEYS))
                .isNotEqualTo(s);
    }

    @Test
    void theNewestOfManyCompatibleVersionsIsAskedFirst() throws Exception {
        List<String> versions = List.of("1.2.0", "1.9.0", "1.10.0", "1.10.0-rc.1", "0.9.0");
        Map<String, ProtoSchema> schemas = new java.util.HashMap<>();
        for (String version : versions) {
            schemas.put(version, schema("v" + version + ".proto"));
        }
        SchemaIndex index = new SchemaIndex(Set.copyOf(versions), Set.copyOf(versions), schemas, KeyPaths.none());

        assertThat(index.fileContainingSymbol("k.Req").map(FileDescriptor::getName)).contains("v1.10.0.proto");
    }

    @Test
    void aSchemaShowsItsServicesAndFiles() throws Exception {
        ProtoSchema s = schema("k.proto");

        assertThat(s.isEmpty()).isFalse();
        assertThat(s.service("k.Keys")).isPresent();
        assertThat(s.files()).extracting(FileDescriptor::getName).containsExactly("k.proto");
    }
}
