package dev.rollcall.discovery.consul;

import static dev.rollcall.discovery.consul.ConsulScenarios.P;
import static dev.rollcall.discovery.consul.ConsulScenarios.SEEN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.testkit.CandidateRecorder;
import dev.rollcall.testkit.consul.ConsulStandIn;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The README's minimal ACL policies, read from the README itself, do what it says they do. */
class ConsulAclPoliciesTest {

    private static final String SERVICE = "rollcall-workers";
    private static final String COORDINATOR = "coordinator-token";
    private static final String WORKER = "worker-token";

    private ConsulStandIn standIn;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        if (standIn != null) {
            standIn.close();
        }
    }

    /** The ```hcl blocks of the module README, in order: the coordinators' policy, then the workers'. */
    static List<String> readmePolicies() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        Matcher m = Pattern.compile("```hcl\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        List<String> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(m.group(1));
        }
        assertThat(blocks).as("the README's policy blocks").hasSize(2);
        return blocks;
    }

    private Map<String, String> keys(String token, String... more) {
        Map<String, String> keys = new HashMap<>();
        keys.put(P + "address", standIn.address());
        keys.put(P + "service", SERVICE);
        keys.put(P + "token", token);
        keys.put(P + "wait", "1s");
        keys.put(P + "rate-limit.interval", "100ms");
        keys.put(P + "registration.check-ttl", "1s");
        for (int i = 0; i < more.length; i += 2) {
            keys.put(P + more[i], more[i + 1]);
        }
        return keys;
    }

    private WorkerRegistration registration(String token, int port) {
        WorkerRegistration r = new ConsulRegistrationProvider().create(
                WorkerInfo.of(WorkerEndpoint.of("127.0.0.1", port), "1.0.0"), Settings.of(keys(token)).scope(P));
        toClose.add(r);
        return r;
    }

    @Test
    void theReadmePoliciesLetWorkersRegisterAndHeartbeatAndCoordinatorsSeeThem() throws Exception {
        List<String> policies = readmePolicies();
        standIn = ConsulStandIn.builder()
                .aclPolicy(COORDINATOR, policies.get(0))
                .aclPolicy(WORKER, policies.get(1))
                .start();
        WorkerRegistration worker = registration(WORKER, 7001);
        worker.start();
        String checkId = "service:" + SERVICE + "-127.0.0.1-7001";
        long passesBefore = standIn.requestCount(r -> r.path().startsWith("/v1/agent/check/pass/"));
        await().atMost(SEEN).until(() -> standIn.requestCount(
                r -> r.path().startsWith("/v1/agent/check/pass/")) >= passesBefore + 3);
        assertThat(standIn.checkStatus(checkId)).as("heartbeats accepted past the TTL").contains("passing");

        CandidateRecorder listener = new CandidateRecorder();
        WorkerDiscovery discovery = new ConsulWorkerDiscoveryProvider().create(Settings.of(keys(COORDINATOR)).scope(P));
        toClose.add(discovery);
        discovery.start(listener);
        await().atMost(SEEN).until(() -> listener.latestUrls() != null && listener.latestUrls().size() == 1);
        assertThat(listener.errors()).isEmpty();

        worker.close();
        await().atMost(SEEN).until(() -> listener.latestUrls().isEmpty());
        assertThat(standIn.services()).isEmpty();
    }

    @Test
    void theCoordinatorPolicyCannotRegisterAWorker() throws Exception {
        standIn = ConsulStandIn.builder().aclPolicy(COORDINATOR, readmePolicies().get(0)).start();

        assertThatThrownBy(registration(COORDINATOR, 7001)::start)
                .isInstanceOf(RegistrationException.class)
                .hasMessageContaining("HTTP 403").hasMessageContaining("service:write")
                .hasMessageNotContaining(COORDINATOR);
    }
}
