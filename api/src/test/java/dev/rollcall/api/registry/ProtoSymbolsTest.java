package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The schema views over fixed snapshots: which version answers, and how keys are read. */
class ProtoSymbolsTest {

    private static FieldDescriptorProto field(String name, int number, Type type, String typeName) {
        FieldDescriptorProto.Builder f = FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(Label.LABEL_OPTIONAL);
        return (typeName == null ? f : f.setTypeName(typeName)).build();
    }

    /**
     * {@code k.Keys/Get(Req)}: {@code Req { Inner inner = 1; uint64 id = 2; Color color = 3; bytes raw = 4; bool flag = 5;
     * repeated string tags = 6; }}, {@code Inner { string name = 1; }}; {@code extra} adds a field to Req.
     */
    private static ProtoSchema schema(boolean extra) throws Exception {
        DescriptorProto.Builder req = DescriptorProto.newBuilder().setName("Req")
                .addField(field("inner", 1, Type.TYPE_MESSAGE, ".k.Inner"))
                .addField(field("id", 2, Type.TYPE_UINT64, null))
                .addField(field("color", 3, Type.TYPE_ENUM, ".k.Color"))
                .addField(field("raw", 4, Type.TYPE_BYTES, null))
                .addField(field("flag", 5, Type.TYPE_BOOL, null))
                .addField(field("tags", 6, Type.TYPE_STRING, null).toBuilder().setLabel(Label.LABEL_REPEATED));
        if (extra) {
            req.addField(field("extra", 7, Type.TYPE_STRING, null));
        }
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("k.proto").setPackage("k").setSyntax("proto3")
                .addEnumType(EnumDescriptorProto.newBuilder().setName("Color")
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("COLOR_NONE").setNumber(0))
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("COLOR_RED").setNumber(1)))
                .addMessageType(DescriptorProto.newBuilder().setName("Inner")
                        .addField(field("name", 1, Type.TYPE_STRING, null)))
                .addMessageType(req)
                .addService(ServiceDescriptorProto.newBuilder().setName("Keys").addMethod(MethodDescriptorProto
                        .newBuilder().setName("Get").setInputType(".k.Req").setOutputType(".k.Inner")))
                .build();
        return ProtoSchema.of(List.of(FileDescriptor.buildFrom(file, new FileDescriptor[0]).findServiceByName("Keys")));
    }

    private static WorkerStatus status(int port, String version, WorkerStatus.State state) {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", port);
        WorkerInfo info = new WorkerInfo(e, version, "", Map.of(),
                List.of(new ServiceInfo("k.Keys", Visibility.PUBLIC, List.of(HandlerInfo.of("Get")))));
        return new WorkerStatus(e, state, state == WorkerStatus.State.COMPATIBLE ? "" : "x", Optional.of(info));
    }

    private static FleetSnapshot snapshot(Map<String, ProtoSchema> schemas, Map<String, String> keys, WorkerStatus... s) {
        return FleetSnapshot.builder(1).publishedAt(Instant.EPOCH).policy("test").statuses(List.of(s)).schemas(schemas)
                .keyPaths(KeyPaths.of(keys)).build();
    }

    @Test
    void fleetWideLookupsAnswerFromTheNewestCompatibleVersion() throws Exception {
        ProtoSchema old = schema(false);
        ProtoSchema newer = schema(true);
        ProtoSchema newest = schema(true);
        WorkerStatus a = status(1, "1.2.0", WorkerStatus.State.COMPATIBLE);
        WorkerStatus b = status(2, "1.10.0", WorkerStatus.State.COMPATIBLE);
        WorkerStatus rejected = status(3, "2.0.0", WorkerStatus.State.REJECTED);
        FleetSnapshot snap = snapshot(Map.of("1.2.0", old, "1.10.0", newer, "2.0.0", newest, "0.9.0", old), Map.of(),
                a, b, rejected);

        assertThat(snap.symbols().method("k.Keys", "Get").orElseThrow().getInputType())
                .isSameAs(newer.method("k.Keys", "Get").orElseThrow().getInputType());
        assertThat(snap.symbols().fileContainingSymbol("k.Inner")).containsSame(newer.file("k.proto").orElseThrow());
        assertThat(snap.symbols().forWorker(a.endpoint())).containsSame(old);
        assertThat(snap.symbols().forWorker(rejected.endpoint())).containsSame(newest);
        assertThat(snap.symbols().forVersion("0.9.0")).as("no worker reports it").isEmpty();
        assertThat(snap.symbols().protoServices()).containsExactly("k.Keys");
        assertThat(snap.symbols().fileContainingSymbol("k.Color")).isPresent();
        assertThat(snap.symbols().fileContainingSymbol("k.Keys.Get")).isPresent();
        assertThat(snap.symbols().fileContainingSymbol("k.Nope")).isEmpty();
        assertThat(FleetSnapshot.builder(1).status(a).build().symbols().forWorker(a.endpoint())).isEmpty();
    }

    @Test
    void keysOfEveryScalarKindAreReadAsDocumented() throws Exception {
        ProtoSchema schema = schema(false);
        Descriptor req = schema.method("k.Keys", "Get").orElseThrow().getInputType();
        DynamicMessage message = DynamicMessage.newBuilder(req)
                .setField(req.findFieldByName("inner"), DynamicMessage.newBuilder(req.getFile()
                        .findMessageTypeByName("Inner")).setField(req.getFile().findMessageTypeByName("Inner")
                        .findFieldByName("name"), "n-1").build())
                .setField(req.findFieldByName("id"), -1L)
                .setField(req.findFieldByName("color"), req.getFile().findEnumTypeByName("Color").findValueByNumber(1))
                .setField(req.findFieldByName("raw"), ByteString.copyFrom(new byte[] {1, 2, 3}))
                .setField(req.findFieldByName("flag"), true).build();
        FleetSnapshot snap = snapshot(Map.of("1.0.0", schema), Map.of(), status(1, "1.0.0", WorkerStatus.State.COMPATIBLE));
        byte[] bytes = message.toByteArray();
        Map<String, String> expected = Map.of("inner.name", "n-1", "id", "18446744073709551615", "color", "COLOR_RED",
                "raw", "AQID", "flag", "true");
        expected.forEach((path, key) -> {
            FleetSnapshot s = snapshot(Map.of("1.0.0", schema), Map.of("k.Keys.Get", path),
                    status(1, "1.0.0", WorkerStatus.State.COMPATIBLE));
            assertThat(s.keyExtractors().extractKey("k.Keys", "Get", bytes)).as(path).isEqualTo(key);
        });
        for (String bad : List.of("tags", "inner", "nope", "id.x")) {
            FleetSnapshot s = snapshot(Map.of("1.0.0", schema), Map.of("k.Keys.Get", bad),
                    status(1, "1.0.0", WorkerStatus.State.COMPATIBLE));
            assertThatThrownBy(() -> s.keyExtractors().extractKey("k.Keys", "Get", bytes)).as(bad)
                    .isInstanceOfSatisfying(KeyExtractionException.class,
                            e -> assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.INVALID_KEY_PATH));
        }
        assertThat(KeyPaths.of(Map.of("k.Keys.Get", "tags", "other.Svc.Get", "a")).problems(schema))
                .singleElement().asString().contains("rollcall.keys.k.Keys.Get", "repeated");
        assertThatThrownBy(() -> snap.keyExtractors().extractKey("k.Keys", "Get", bytes))
                .isInstanceOfSatisfying(KeyExtractionException.class,
                        e -> assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.NO_KEY_CONFIGURED));
        assertThatThrownBy(() -> KeyPaths.of(Map.of("Get", "a"))).hasMessageContaining("<service>.<method>");
        assertThatThrownBy(() -> KeyPaths.of(Map.of("k.Keys.Get", "a-b"))).hasMessageContaining("a-b");
    }
}
