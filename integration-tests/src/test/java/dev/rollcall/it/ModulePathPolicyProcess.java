package dev.rollcall.it;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import java.util.Map;

/**
 * A child JVM whose module path holds {@code rollcall-api} (a named module), a policy compiled as a
 * named module, and (when they are jars) core, the static backend and the stock policies as
 * automatic modules. Prints the module of each and the policy the resolver found by its type.
 */
final class ModulePathPolicyProcess {

    private ModulePathPolicyProcess() {
    }

    public static void main(String[] args) {
        System.out.println("api module: " + dev.rollcall.api.WorkerInfo.class.getModule().getName());
        System.out.println("core module: " + WorkerResolver.class.getModule().getName());
        System.out.println("protocol module: "
                + dev.rollcall.protocol.v1.WorkerInfoResponse.class.getModule().getName());
        System.out.println("static module: "
                + dev.rollcall.discovery.staticlist.StaticWorkerDiscoveryProvider.class.getModule().getName());
        System.out.println("version-policy module: "
                + dev.rollcall.policy.SemverRangePolicyProvider.class.getModule().getName());
        RollcallConfig config = RollcallConfig.of(Map.of(
                "rollcall.discovery.type", "static",
                "rollcall.discovery.static.endpoints", "grpc://127.0.0.1:9",
                "rollcall.policy.type", "pinned",
                "rollcall.policy.pinned.version", "2.0.0"));
        try (WorkerResolver resolver = WorkerResolver.builder().config(config).build()) {
            System.out.println("policy: " + resolver.pin().policy());
        }
    }
}
