package dev.rollcall.it.polyglot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import dev.rollcall.protocol.v1.FleetProto;
import dev.rollcall.protocol.v1.WorkerProto;
import dev.rollcall.conformance.ProtocolCompatibility;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * The breaking-change check of the build: {@code rollcall.v1} as the build compiles it keeps the
 * compatibility promise of docs/protocol.md against the last published descriptor
 * ({@code protocol-baseline/rollcall-v1.protoset}, see its README). A break fails with its name.
 */
class ProtocolBaselineTest {

    @Test
    void theCompiledProtocolOnlyAddsToThePublishedV1() throws Exception {
        FileDescriptorSet published;
        try (InputStream in = ProtocolBaselineTest.class.getResourceAsStream("/protocol-baseline/rollcall-v1.protoset")) {
            assertThat(in).as("protocol-baseline/rollcall-v1.protoset on the test class path").isNotNull();
            published = FileDescriptorSet.parseFrom(in);
        }
        FileDescriptorSet current = FileDescriptorSet.newBuilder().addFile(WorkerProto.getDescriptor().toProto())
                .addFile(FleetProto.getDescriptor().toProto()).build();

        assertThat(published.getFileList()).extracting(f -> f.getName()).contains("rollcall/v1/worker.proto", "rollcall/v1/fleet.proto");
        assertThat(ProtocolCompatibility.breakingChanges(published, current))
                .as("breaking changes to rollcall.v1 (docs/protocol.md, 'The compatibility promise of v1'): make the change"
                        + " by adding, or make it in rollcall.v2")
                .isEmpty();
    }
}
