package dev.rollcall.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import dev.rollcall.protocol.v1.WorkerProto;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Each kind of breaking change planted in the real rollcall.v1 descriptor, and the additions the promise allows. */
class ProtocolCompatibilityTest {

    private static final FileDescriptorProto V1 = WorkerProto.getDescriptor().toProto();

    private static String onlyBreakAfter(Consumer<FileDescriptorProto.Builder> change) {
        FileDescriptorProto.Builder b = V1.toBuilder();
        change.accept(b);
        var breaks = ProtocolCompatibility.breakingChanges(set(V1), set(b.build()));
        assertThat(breaks).hasSize(1);
        return breaks.get(0);
    }

    private static FileDescriptorSet set(FileDescriptorProto file) {
        return FileDescriptorSet.newBuilder().addFile(file).build();
    }

    private static DescriptorProto.Builder message(FileDescriptorProto.Builder file, String name) {
        return file.getMessageTypeBuilderList().stream().filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    private static FieldDescriptorProto.Builder field(FileDescriptorProto.Builder file, String message, String name) {
        return message(file, message).getFieldBuilderList().stream().filter(f -> f.getName().equals(name)).findFirst()
                .orElseThrow();
    }

    @Test
    void theProtocolAsItIs_hasNoBreakingChange() {
        assertThat(ProtocolCompatibility.breakingChanges(set(V1), set(V1))).isEmpty();
    }

    @Test
    void exactDrain_onlyAddsToV1AsItWasBefore() {
        // v1 before exact drain (docs/protocol.md, W18-W22): no holder_id, no holders, no ReleaseWorker
        FileDescriptorProto.Builder before = V1.toBuilder();
        DescriptorProto.Builder request = message(before, "WorkerInfoRequest");
        request.removeField(request.getFieldBuilderList().indexOf(field(before, "WorkerInfoRequest", "holder_id")));
        DescriptorProto.Builder response = message(before, "WorkerInfoResponse");
        response.removeField(response.getFieldBuilderList().indexOf(field(before, "WorkerInfoResponse", "holders")));
        var service = before.getServiceBuilder(0);
        service.removeMethod(service.getMethodList().stream().map(m -> m.getName()).toList().indexOf("ReleaseWorker"));
        var messages = before.getMessageTypeList().stream().map(DescriptorProto::getName).toList();
        before.removeMessageType(messages.indexOf("ReleaseWorkerResponse"));
        before.removeMessageType(messages.indexOf("ReleaseWorkerRequest"));

        assertThat(ProtocolCompatibility.breakingChanges(set(before.build()), set(V1))).isEmpty();
        assertThat(ProtocolCompatibility.breakingChanges(set(V1), set(before.build()))).hasSize(5)
                .contains("method rollcall.v1.WorkerService.ReleaseWorker removed or renamed");
    }

    @Test
    void aRemovedField_isNamed() {
        assertThat(onlyBreakAfter(f -> message(f, "WorkerInfoResponse").removeField(1)))
                .isEqualTo("field rollcall.v1.WorkerInfoResponse.instance_id (2) removed");
    }

    @Test
    void aRenumberedField_isNamed() {
        assertThat(onlyBreakAfter(f -> field(f, "WorkerInfoResponse", "revision").setNumber(16)))
                .isEqualTo("field rollcall.v1.WorkerInfoResponse.revision (6) renumbered to 16");
    }

    @Test
    void aRenamedField_isNamed() {
        assertThat(onlyBreakAfter(f -> field(f, "WorkerInfoResponse", "version").setName("release")))
                .isEqualTo("field rollcall.v1.WorkerInfoResponse.version (1) renamed to release");
    }

    @Test
    void aRetypedField_isNamed() {
        assertThat(onlyBreakAfter(f -> field(f, "WorkerInfoResponse", "version").setType(FieldDescriptorProto.Type.TYPE_BYTES)))
                .isEqualTo("field rollcall.v1.WorkerInfoResponse.version (1) retyped from string to bytes");
        assertThat(onlyBreakAfter(f -> field(f, "WorkerInfoResponse", "services").setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL)))
                .isEqualTo("field rollcall.v1.WorkerInfoResponse.services (4) retyped from repeated .rollcall.v1.ServiceInfo"
                        + " to .rollcall.v1.ServiceInfo");
    }

    @Test
    void aRenamedOrRemovedMethod_isNamed() {
        assertThat(onlyBreakAfter(f -> f.getServiceBuilder(0).getMethodBuilder(0).setName("GetWorkerInfo")))
                .isEqualTo("method rollcall.v1.WorkerService.WorkerInfo removed or renamed");
        assertThat(onlyBreakAfter(f -> f.getServiceBuilder(0).removeMethod(1)))
                .isEqualTo("method rollcall.v1.WorkerService.WatchWorkerInfo removed or renamed");
    }

    @Test
    void aMethodMadeUnary_isNamed() {
        assertThat(onlyBreakAfter(f -> f.getServiceBuilder(0).getMethodBuilder(1).setServerStreaming(false)))
                .isEqualTo("method rollcall.v1.WorkerService.WatchWorkerInfo no longer returns a stream");
    }

    @Test
    void aRenamedService_isNamed() {
        assertThat(onlyBreakAfter(f -> f.getServiceBuilder(0).setName("Worker")))
                .isEqualTo("service rollcall.v1.WorkerService removed or renamed");
    }

    @Test
    void aChangedEnumNumber_isNamed() {
        assertThat(onlyBreakAfter(f -> f.getEnumTypeBuilderList().stream().filter(e -> e.getName().equals("ServingState"))
                .findFirst().orElseThrow().getValueBuilderList().stream().filter(v -> v.getName().equals("DRAINING"))
                .findFirst().orElseThrow().setNumber(3)))
                .isEqualTo("enum value rollcall.v1.ServingState.DRAINING (2) renumbered to 3");
    }

    @Test
    void aRenamedMessage_isNamed() {
        // Renaming a message also changes the type of every field that holds it: both are named.
        FileDescriptorProto.Builder b = V1.toBuilder();
        message(b, "HandlerInfo").setName("Handler");
        assertThat(ProtocolCompatibility.breakingChanges(set(V1), set(b.build())))
                .containsExactly("message rollcall.v1.HandlerInfo removed or renamed");
        message(b, "ServiceInfo");
        field(b, "ServiceInfo", "handlers").setTypeName(".rollcall.v1.Handler");
        assertThat(ProtocolCompatibility.breakingChanges(set(V1), set(b.build()))).containsExactly(
                "field rollcall.v1.ServiceInfo.handlers (3) retyped from repeated .rollcall.v1.HandlerInfo to repeated"
                        + " .rollcall.v1.Handler",
                "message rollcall.v1.HandlerInfo removed or renamed");
    }

    @Test
    void additions_areAllowed() {
        FileDescriptorProto.Builder b = V1.toBuilder();
        // A number no field of v1 will take soon: v1 grows (holders took 8).
        message(b, "WorkerInfoResponse").addField(FieldDescriptorProto.newBuilder().setName("zone").setNumber(1000)
                .setType(FieldDescriptorProto.Type.TYPE_STRING).setJsonName("zone"));
        b.getEnumTypeBuilderList().forEach(e -> e.addValue(e.getValue(0).toBuilder().setName(e.getName().toUpperCase() + "_NEW")
                .setNumber(9)));
        b.addMessageType(DescriptorProto.newBuilder().setName("ReleaseRequest"));
        b.getServiceBuilder(0).addMethod(b.getServiceBuilder(0).getMethod(0).toBuilder().setName("Release"));

        assertThat(ProtocolCompatibility.breakingChanges(set(V1), set(b.build()))).isEmpty();
    }

    @Test
    void aRemovedFile_isNamed() {
        assertThat(ProtocolCompatibility.breakingChanges(set(V1), FileDescriptorSet.getDefaultInstance()))
                .containsExactly("file rollcall/v1/worker.proto removed or renamed");
    }
}
