package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.PushDiscovery;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's own probe protocol from a jar of its own: the HTTP JSON protocol of
 * docs/probe-protocols.md ({@code com.example.protocol.HttpJsonProtocolProvider}, compiled here
 * again from its source into a jar whose {@code META-INF/services} file is the only thing that
 * names it), found through the class loader the resolver is given, asking JDK HTTP servers on
 * loopback.
 */
class UserProbeProtocolTest {

    private static final Path SOURCE = Path.of("src/test/java/com/example/protocol/HttpJsonProtocolProvider.java");
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void aProtocolFromAJarOfItsOwnProbesWorkersOverHttp(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> WorkerResolver.builder().probeProtocol("http-json").discovery(new PushDiscovery())
                .policy(w -> Verdict.accept()).build())
                .as("nothing on the test's own class path provides it")
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("known: datafusion-distributed, grpc-health, none, rollcall");

        Path jar = jar(dir);
        AtomicInteger asked = new AtomicInteger();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()},
                UserProbeProtocolTest.class.getClassLoader());
             Info current = new Info("{\"nodeVersion\": {}, \"version\": \"470\", \"coordinator\": false}", asked);
             Info older = new Info("{\"version\": \"468\"}", asked);
             Info broken = new Info("{\"environment\": \"prod\"}", asked)) {
            PushDiscovery discovery = new PushDiscovery();
            try (WorkerResolver resolver = WorkerResolver.builder().name("http-json").classLoader(loader)
                    .probeProtocol("http-json").discovery(discovery)
                    .policy(w -> w.version().equals("470") ? Verdict.accept() : Verdict.reject("not 470"))
                    .build()) {
                discovery.push(List.of(current.endpoint(), older.endpoint(), broken.endpoint()));
                FleetSnapshot s = resolver.await(x -> x.counts().candidates() == 3 && x.counts().pending() == 0, WAIT);

                assertThat(s.status(current.endpoint().url()).orElseThrow().state()).isEqualTo(State.COMPATIBLE);
                assertThat(s.status(older.endpoint().url()).orElseThrow().state()).isEqualTo(State.REJECTED);
                assertThat(s.status(broken.endpoint().url()).orElseThrow().state()).isEqualTo(State.UNREACHABLE);
                assertThat(s.status(broken.endpoint().url()).orElseThrow().reason()).contains("no \"version\"");
                assertThat(asked.get()).isGreaterThanOrEqualTo(3);
                assertThat(resolver.probesSent()).as("it asks the worker: counted").isGreaterThanOrEqualTo(3);
            }
        }
    }

    /** The example, compiled against this JVM's class path, in a jar with its services file. */
    private static Path jar(Path dir) throws IOException {
        Path classes = Files.createDirectories(dir.resolve("classes"));
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, "--release", "17", "-d", classes.toString(),
                "-cp", System.getProperty("java.class.path"), SOURCE.toString());
        assertThat(rc).as("javac of " + SOURCE).isZero();
        Path jar = dir.resolve("http-json-protocol.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
            out.putNextEntry(new JarEntry("META-INF/services/dev.rollcall.protocol.spi.ProbeProtocolProvider"));
            out.write("com.example.protocol.HttpJsonProtocolProvider\n".getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
        return jar;
    }

    /** A JDK HTTP server on loopback answering {@code GET /v1/info} with {@code json}. */
    private static final class Info implements AutoCloseable {
        private final HttpServer server;

        Info(String json, AtomicInteger asked) throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/v1/info", exchange -> {
                asked.incrementAndGet();
                byte[] body = json.getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
        }

        WorkerEndpoint endpoint() {
            return WorkerEndpoint.of("127.0.0.1", server.getAddress().getPort());
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
