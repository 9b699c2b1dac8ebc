package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.FileDescriptor;
import dev.rollcall.protocol.v1.FleetProto;
import dev.rollcall.protocol.v1.WorkerProto;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

    /** fleet.proto imports worker.proto (Capability): without it in the set, Python cannot build the messages. */
    @Test
    void theFleetClientsCommittedProtosetIsTheFleetProtoTheBuildCompilesWithWhatItImports() throws Exception {
        Path protoset = ReferenceWorker.repositoryRoot().resolve("examples/clients/python/rollcall-v1-fleet.protoset");
        FileDescriptorSet committed = FileDescriptorSet.parseFrom(Files.readAllBytes(protoset));
        List<FileDescriptorProto> compiled = new ArrayList<>();
        for (FileDescriptor dependency : FleetProto.getDescriptor().getDependencies()) {
            compiled.add(withoutJsonNames(dependency.toProto()));
        }
        compiled.add(withoutJsonNames(FleetProto.getDescriptor().toProto()));
        assertThat(committed.getFileList().stream().map(PythonProtosetTest::withoutJsonNames).toList())
                .as("%s is out of date: run examples/clients/python/regenerate-protoset", protoset)
                .containsExactlyElementsOf(compiled);
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
