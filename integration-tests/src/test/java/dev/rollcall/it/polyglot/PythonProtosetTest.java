package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import dev.rollcall.protocol.v1.FleetProto;
import dev.rollcall.protocol.v1.WorkerProto;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The Python reference worker and the Python fleet client build their messages from committed
 * FileDescriptorSets (Debian's grpc-tools cannot compile the .proto): each must describe exactly the
 * {@code rollcall.v1} file that the Java build compiles, or it would speak an older protocol without
 * anyone noticing.
 */
class PythonProtosetTest {

    @Test
    void theCommittedProtosetIsTheProtoTheBuildCompiles() throws Exception {
        Path protoset = ReferenceWorker.repositoryRoot().resolve("examples/workers/python/rollcall-v1.protoset");
        FileDescriptorSet committed = FileDescriptorSet.parseFrom(Files.readAllBytes(protoset));
        FileDescriptorProto compiled = WorkerProto.getDescriptor().toProto();
        assertThat(committed.getFileList()).as("files in %s", protoset).hasSize(1);
        assertThat(withoutJsonNames(committed.getFile(0)))
                .as("%s is out of date: run examples/workers/python/regenerate-protoset", protoset)
                .isEqualTo(withoutJsonNames(compiled));
    }

    @Test
    void theFleetClientsCommittedProtosetIsTheFleetProtoTheBuildCompiles() throws Exception {
        Path protoset = ReferenceWorker.repositoryRoot().resolve("examples/clients/python/rollcall-v1-fleet.protoset");
        FileDescriptorSet committed = FileDescriptorSet.parseFrom(Files.readAllBytes(protoset));
        FileDescriptorProto compiled = FleetProto.getDescriptor().toProto();
        assertThat(committed.getFileList()).as("files in %s", protoset).hasSize(1);
        assertThat(withoutJsonNames(committed.getFile(0)))
                .as("%s is out of date: run examples/clients/python/regenerate-protoset", protoset)
                .isEqualTo(withoutJsonNames(compiled));
    }

    /** protoc writes json_name into descriptor sets, not into the descriptors it embeds in Java classes: derived, not compared. */
    private static FileDescriptorProto withoutJsonNames(FileDescriptorProto file) {
        FileDescriptorProto.Builder b = file.toBuilder();
        b.getMessageTypeBuilderList().forEach(PythonProtosetTest::clearJsonNames);
        return b.build();
    }

    private static void clearJsonNames(DescriptorProto.Builder message) {
        message.getFieldBuilderList().forEach(f -> f.clearJsonName());
        message.getNestedTypeBuilderList().forEach(PythonProtosetTest::clearJsonNames); // map entries
    }
}
