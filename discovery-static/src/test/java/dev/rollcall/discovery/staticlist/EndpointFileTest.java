package dev.rollcall.discovery.staticlist;

import static dev.rollcall.discovery.staticlist.StaticWorkerDiscoveryTest.endpoints;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EndpointFileTest {

    private static final Path SOURCE = Path.of("/etc/rollcall/workers.txt");

    @TempDir
    Path dir;

    @Test
    void ignoresCommentsAndBlankLines() {
        EndpointFile.Parsed parsed = parse("""
                # whole-line comment
                   # indented comment

                grpc://a:7001 # trailing comment
                grpcs://b:7002#no space before it
                """);

        assertThat(parsed.endpoints()).isEqualTo(endpoints("grpc://a:7001", "grpcs://b:7002"));
        assertThat(parsed.skipped()).isZero();
    }

    @Test
    void acceptsWindowsLineEndingsAndByteOrderMark() {
        EndpointFile.Parsed parsed = parse("\uFEFFgrpc://a:7001\r\ngrpc://b:7002\r\n");

        assertThat(parsed.endpoints()).isEqualTo(endpoints("grpc://a:7001", "grpc://b:7002"));
    }

    @Test
    void mergesSpellingsOfTheSameEndpoint() {
        EndpointFile.Parsed parsed = parse("grpc://Host:7001\nhttp://host:7001/\n");

        assertThat(parsed.endpoints()).isEqualTo(endpoints("grpc://host:7001"));
    }

    @Test
    void skipsMalformedLinesLoggingFileLineAndReason() {
        String log = captureStderr(() -> {
            EndpointFile.Parsed parsed = parse("grpc://a:7001\ngrpc://a:7001, grpc://b:7002\ngrpc://c:7003\n");
            assertThat(parsed.endpoints()).isEqualTo(endpoints("grpc://a:7001", "grpc://c:7003"));
            assertThat(parsed.skipped()).isOne();
        });

        assertThat(log).contains("WARN").contains(SOURCE + ":2:").contains("grpc://a:7001, grpc://b:7002")
                .contains("white space");
    }

    @Test
    void skipsALineWithInvalidUtf8AndKeepsTheOthers() {
        byte[] content = {'g', 'r', 'p', 'c', ':', '/', '/', (byte) 0xff, ':', '1', '\n',
            'g', 'r', 'p', 'c', ':', '/', '/', 'a', ':', '1', '\n'};

        EndpointFile.Parsed parsed = EndpointFile.parse(SOURCE, content);

        assertThat(parsed.endpoints()).isEqualTo(endpoints("grpc://a:1"));
        assertThat(parsed.skipped()).isOne();
    }

    @Test
    void refusesAFileTooLargeToBeAWorkerList() throws IOException {
        Path huge = Files.write(dir.resolve("huge.log"), new byte[EndpointFile.MAX_BYTES + 1]);

        assertThatThrownBy(() -> EndpointFile.read(huge)).isInstanceOf(IOException.class)
                .hasMessageContaining("larger than");
    }

    private static EndpointFile.Parsed parse(String text) {
        return EndpointFile.parse(SOURCE, text.getBytes(StandardCharsets.UTF_8));
    }

    /** slf4j-simple writes to whatever System.err is at the time of each call. */
    private static String captureStderr(Runnable action) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
