package dev.rollcall.discovery.etcd;

import dev.rollcall.testkit.CandidateRecorder;
import static dev.rollcall.discovery.etcd.Etcd.bytes;
import static dev.rollcall.discovery.etcd.Etcd.call;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.Client;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code user} and {@code password} against an etcd with authentication on; the password is never shown. */
class EtcdAuthenticationTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String PASSWORD = "correct-horse-battery";
    private static final String WRONG = "wrong-horse-battery";

    private static EtcdServer server;

    @BeforeAll
    static void startEtcdWithAuthentication() {
        server = EtcdServer.start();
        try (Client admin = Client.builder().endpoints(server.endpoint()).build()) {
            Auth auth = admin.getAuthClient();
            call(() -> auth.userAdd(bytes("root"), bytes(PASSWORD)).get(10, TimeUnit.SECONDS));
            call(() -> auth.roleAdd(bytes("root")).get(10, TimeUnit.SECONDS));
            call(() -> auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS));
            call(() -> admin.getKVClient().put(bytes("/rollcall/workers/w1"), bytes("grpc://127.0.7.1:7001"))
                    .get(10, TimeUnit.SECONDS));
            call(() -> auth.authEnable().get(10, TimeUnit.SECONDS));
        }
    }

    @AfterAll
    static void stopEtcd() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void watchesAndRegistersWithTheRightCredentials() {
        Map<String, String> keys = Map.of("endpoints", server.endpoint(), "user", "root", "password", PASSWORD);
        CandidateRecorder listener = new CandidateRecorder();
        WorkerInfo self = WorkerInfo.of(WorkerEndpoint.of("127.0.7.2", 7001), "1.0.0");
        try (WorkerDiscovery discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys));
             WorkerRegistration registration = new EtcdRegistrationProvider().create(self, Etcd.settings(keys))) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> Set.of(WorkerEndpoint.parse("grpc://127.0.7.1:7001")).equals(listener.latest()));

            registration.start();

            await().atMost(WAIT).until(() -> Set.of(WorkerEndpoint.parse("grpc://127.0.7.1:7001"),
                    WorkerEndpoint.parse("grpc://127.0.7.2:7001").withLabels(Map.of(WorkerEndpoint.VERSION_LABEL, "1.0.0"))).equals(listener.latest()));
            assertThat(listener.errors()).isEmpty();
        }
    }

    @Test
    void reportsWrongCredentialsWithoutShowingThePassword() {
        Map<String, String> keys = Map.of("endpoints", server.endpoint(), "user", "root", "password", WRONG,
                "backoff.initial", "200ms", "backoff.max", "1s");
        CandidateRecorder listener = new CandidateRecorder();
        try (WorkerDiscovery discovery = new EtcdWorkerDiscoveryProvider().create(Etcd.settings(keys))) {
            discovery.start(listener);
            await().atMost(WAIT).until(() -> !listener.errors().isEmpty());
            assertThat(listener.errors().get(0)).hasMessageContaining("authentication failed");
            assertThat(listener.errors()).allSatisfy(e -> assertThat(stackTrace(e)).doesNotContain(WRONG));
            assertThat(listener.sets()).isEmpty();
            assertThat(discovery.description()).doesNotContain(WRONG);
        }

        WorkerRegistration registration = new EtcdRegistrationProvider().create(
                WorkerInfo.of(WorkerEndpoint.of("127.0.7.3", 7001), "1.0.0"), Etcd.settings(keys));
        assertThatThrownBy(registration::start).isInstanceOf(RegistrationException.class)
                .hasMessageContaining("authentication failed")
                .satisfies(e -> assertThat(stackTrace(e)).doesNotContain(WRONG));
        registration.close();
    }

    private static String stackTrace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
