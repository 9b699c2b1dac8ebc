package dev.rollcall.testkit.consul;

import java.util.List;
import java.util.Map;

/**
 * A service as registered with {@link ConsulStandIn}'s agent endpoint.
 *
 * @param id      the service ID
 * @param name    the service name
 * @param tags    its tags, in registration order
 * @param address its address, {@code ""} when it uses the node's
 * @param port    its port, 0 when none was given
 * @param meta    its service meta
 */
public record RegisteredService(String id, String name, List<String> tags, String address, int port,
                                Map<String, String> meta) {

    public RegisteredService {
        tags = List.copyOf(tags);
        meta = Map.copyOf(meta);
    }
}
