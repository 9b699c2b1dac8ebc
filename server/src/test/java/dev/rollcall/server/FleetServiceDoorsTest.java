package dev.rollcall.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.GetFleetRequest;
import dev.rollcall.protocol.v1.HoldFleetRequest;
import dev.rollcall.protocol.v1.WatchFleetRequest;
import dev.rollcall.testkit.tls.TestCertificates;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet API's doors: TLS, mutual TLS (a client without a certificate the CA signed is refused),
 * and the bearer token (none or another: UNAUTHENTICATED, naming the header but never the token).
 */
class FleetServiceDoorsTest {

    private static final String TOKEN = "s3cr3t-token-0123456789";

    @TempDir
    Path dir;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private ManagedChannel tlsChannel(ServedFleet fleet, ChannelCredentials credentials) {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", fleet.server.grpcAddress().getPort(),
                credentials).build();
        channels.add(c);
        return c;
    }

    @Test
    void overTlsAClientThatTrustsTheCaIsServed() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir);
        try (ServedFleet fleet = ServedFleet.start(false, Map.of(
                "rollcall.serve.tls.cert", certs.server().certificate().toString(),
                "rollcall.serve.tls.key", certs.server().key().toString()))) {
            ManagedChannel c = tlsChannel(fleet, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.ca().toFile()).build());
            FleetSnapshot got = FleetServiceGrpc.newBlockingStub(c).getFleet(GetFleetRequest.getDefaultInstance());
            assertThat(got.getServiceInstanceId()).isEqualTo(fleet.server.instanceId());
        }
    }

    @Test
    void underAClientCaAClientWithoutACertificateOrWithAnotherCasIsRefusedAndOneWithItsIsServed()
            throws Exception {
        TestCertificates certs = TestCertificates.generate(dir);
        try (ServedFleet fleet = ServedFleet.start(false, Map.of(
                "rollcall.serve.tls.cert", certs.server().certificate().toString(),
                "rollcall.serve.tls.key", certs.server().key().toString(),
                "rollcall.serve.tls.client-ca", certs.ca().toString()))) {
            ManagedChannel anonymous = tlsChannel(fleet, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.ca().toFile()).build());
            assertThatThrownBy(() -> FleetServiceGrpc.newBlockingStub(anonymous)
                    .getFleet(GetFleetRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
            ManagedChannel stranger = tlsChannel(fleet, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.ca().toFile())
                    .keyManager(certs.otherClient().certificate().toFile(), certs.otherClient().key().toFile())
                    .build());
            assertThatThrownBy(() -> FleetServiceGrpc.newBlockingStub(stranger)
                    .getFleet(GetFleetRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
            ManagedChannel known = tlsChannel(fleet, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.ca().toFile())
                    .keyManager(certs.client().certificate().toFile(), certs.client().key().toFile()).build());
            assertThat(FleetServiceGrpc.newBlockingStub(known).getFleet(GetFleetRequest.getDefaultInstance())
                    .getServiceInstanceId()).isEqualTo(fleet.server.instanceId());
        }
    }

    @Test
    void aClientCaWithoutACertificateFailsStartUpNamingTheKeys() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir);
        assertThatThrownBy(() -> ServedFleet.start(false, Map.of("rollcall.serve.tls.client-ca",
                certs.ca().toString()))).isInstanceOfSatisfying(ConfigurationException.class, e -> {
                    assertThat(e.key()).isEqualTo("rollcall.serve.tls.cert");
                    assertThat(e.getMessage()).contains("rollcall.serve.tls.client-ca");
                });
    }

    @Test
    void withATokenFileACallWithoutTheTokenIsUnauthenticatedAndOneWithItIsServed() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "\n");
        ByteArrayOutputStream logs = new ByteArrayOutputStream();
        PrintStream was = System.err;
        System.setErr(new PrintStream(logs, true, StandardCharsets.UTF_8)); // slf4j-simple logs to stderr
        try (ServedFleet fleet = ServedFleet.start(false, Map.of("rollcall.serve.token-file", tokenFile.toString()))) {
            FleetServiceGrpc.FleetServiceBlockingStub none = fleet.blocking();
            StatusRuntimeException missing = refusal(() -> none.getFleet(GetFleetRequest.getDefaultInstance()));
            assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(missing.getStatus().getDescription()).contains("authorization");

            FleetServiceGrpc.FleetServiceBlockingStub wrong = withToken(fleet.blocking(), TOKEN + "x");
            StatusRuntimeException refused = refusal(() -> wrong.watchFleet(WatchFleetRequest.getDefaultInstance())
                    .next());
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(refused.getStatus().getDescription()).contains("authorization").doesNotContain(TOKEN);
            StatusRuntimeException prefix = refusal(() -> withToken(fleet.blocking(), TOKEN.substring(0, 5))
                    .holdFleet(HoldFleetRequest.getDefaultInstance()).next());
            assertThat(prefix.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);

            FleetSnapshot served = withToken(fleet.blocking(), TOKEN).getFleet(GetFleetRequest.getDefaultInstance());
            assertThat(served.getServiceInstanceId()).isEqualTo(fleet.server.instanceId());
            assertThat(withAuthorization(fleet.blocking(), "bearer " + TOKEN)
                    .getFleet(GetFleetRequest.getDefaultInstance()).getServiceInstanceId())
                    .as("the scheme in any case").isEqualTo(fleet.server.instanceId());
            assertThat(fleet.server.holds()).as("the refused hold held nothing").isZero();
        } finally {
            System.setErr(was);
        }
        assertThat(logs.toString(StandardCharsets.UTF_8)).as("logs").doesNotContain(TOKEN.substring(0, 10));
    }

    @Test
    void anEmptyTokenFileFailsStartUpNamingTheKeyAndTheFile() throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("empty-token"), "\n");
        assertThatThrownBy(() -> ServedFleet.start(false, Map.of("rollcall.serve.token-file", tokenFile.toString())))
                .isInstanceOfSatisfying(ConfigurationException.class, e -> {
                    assertThat(e.key()).isEqualTo("rollcall.serve.token-file");
                    assertThat(e.getMessage()).contains(tokenFile.toString()).contains("empty");
                });
    }

    private static FleetServiceGrpc.FleetServiceBlockingStub withToken(FleetServiceGrpc.FleetServiceBlockingStub stub,
                                                                       String token) {
        return withAuthorization(stub, "Bearer " + token);
    }

    private static FleetServiceGrpc.FleetServiceBlockingStub withAuthorization(
            FleetServiceGrpc.FleetServiceBlockingStub stub, String authorization) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), authorization);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private static StatusRuntimeException refusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call was served");
    }
}
