package dev.rollcall.discovery.consul;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * {@link ConsulScenarios} against a real Consul agent, opt-in: runs only when
 * {@code CONSUL_HTTP_ADDR} is set (plain HTTP, e.g. {@code 127.0.0.1:8500}); sends
 * {@code CONSUL_HTTP_TOKEN} when that is set. The token needs {@code service:write} and
 * {@code service:read} on {@code rollcall-test-*} services and {@code node:read}. See the README.
 */
@EnabledIfEnvironmentVariable(named = "CONSUL_HTTP_ADDR", matches = ".+")
class RealAgentConsulScenariosTest extends ConsulScenarios {

    @Override
    String address() {
        return System.getenv("CONSUL_HTTP_ADDR");
    }

    @Override
    String token() {
        String token = System.getenv("CONSUL_HTTP_TOKEN");
        return token == null || token.isBlank() ? null : token.strip();
    }

    @Override
    String deregisterAfter() {
        return "1m";    // Consul's minimum; the scenario only needs the TTL to run out
    }
}
