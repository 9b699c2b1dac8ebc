package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rollcall.worker.RollcallWorker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * What a worker does when Arrow cannot work on its JVM (JDK 24+ without
 * {@code --sun-misc-unsafe-memory-access=allow}) and when its Flight producer throws: both used to
 * reach the client as a bare {@code INTERNAL} with nothing in the worker's log.
 */
class ArrowOnTheJvmTest {

    private static final String NETTY_WITHOUT_UNSAFE = "class io.netty.buffer.PooledDirectByteBuf cannot be cast "
            + "to class io.netty.buffer.PooledUnsafeDirectByteBuf";

    @Test
    void aWorkerWhoseArrowCannotAllocateFailsToStartNamingTheFlag() {
        // The allocation failure of Arrow 19 on JDK 24+ without the flag, on any JDK: every
        // buffer(...) throws what Netty's allocator throws there; everything else is a real allocator.
        try (BufferAllocator real = new RootAllocator()) {
            BufferAllocator allocator = (BufferAllocator) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {BufferAllocator.class}, (proxy, method, args) -> {
                        if (method.getName().equals("buffer")) {
                            throw new ClassCastException(NETTY_WITHOUT_UNSAFE);
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            assertThatThrownBy(() -> RollcallWorker.builder().version("1.0.0").allocator(allocator).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Arrow cannot allocate memory")
                    .hasMessageContaining("--sun-misc-unsafe-memory-access=allow")
                    .hasMessageContaining("PooledUnsafeDirectByteBuf");
        }
    }

    @Test
    void onJava24OrNewerAWorkerStartedWithoutTheUnsafeFlagSaysWhichFlagItNeeds() throws Exception {
        assumeTrue(Runtime.version().feature() >= 24, "JDK 17 to 23 need no flag besides --add-opens");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                WorkerStartProcess.class.getName())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).startsWith("failed: Arrow cannot allocate memory on this JVM (Java "
                + Runtime.version().feature() + ")").contains("--sun-misc-unsafe-memory-access=allow");
    }

    @Test
    void whatAFlightProducerThrowsIsLoggedWithItsStackWhileTheClientSeesInternal() throws Exception {
        NoOpFlightProducer failing = new NoOpFlightProducer() {
            @Override
            public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
                throw new IllegalStateException("the producer broke on ticket " + new String(ticket.getBytes(),
                        StandardCharsets.UTF_8));
            }
        };
        PrintStream originalErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));   // slf4j-simple writes there
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").flightProducer(failing).start();
             BufferAllocator allocator = new RootAllocator();
             FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1",
                     worker.port())).build()) {
            assertThatThrownBy(() -> {
                try (FlightStream stream = client.getStream(new Ticket("t-42".getBytes(StandardCharsets.UTF_8)))) {
                    stream.next();
                }
            }).isInstanceOfSatisfying(FlightRuntimeException.class,
                    e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INTERNAL));
            String logged = err.toString(StandardCharsets.UTF_8);
            assertThat(logged).contains("worker " + worker.endpoint().url()
                            + ": the Flight producer failed in getStream; the client sees INTERNAL")
                    .contains("java.lang.IllegalStateException: the producer broke on ticket t-42")
                    .contains("at dev.rollcall.it.ArrowOnTheJvmTest");
        } finally {
            System.setErr(originalErr);
            originalErr.print(err.toString(StandardCharsets.UTF_8));
        }
    }
}
