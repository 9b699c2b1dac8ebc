/**
 * Rollcall's API: the SPIs a discovery backend, a version policy or a worker registration
 * implements, the value types they exchange, and the read-only registry views a coordinator
 * consumes. It requires only semver4j at run time (a requirement's npm range); {@code com.google.protobuf}
 * only for the schema views ({@code ProtoSymbols}, {@code KeyExtractors}).
 *
 * <p>A policy or backend in a named module declares itself with {@code provides}, e.g.
 * {@code provides dev.rollcall.api.policy.VersionPolicyProvider with com.example.MyPolicyProvider;}.
 *
 * <p>{@code dev.rollcall.api.internal} (configuration plumbing, provider lookup, thread naming and
 * the backends' loop threads, PEM files) is shared by Rollcall's own modules only; it is exported
 * to them and to nobody else.
 */
@SuppressWarnings("module") // the modules named below are automatic modules, not known when api compiles
module dev.rollcall.api {
    requires static com.google.protobuf;
    requires org.semver4j;

    exports dev.rollcall.api;
    exports dev.rollcall.api.discovery;
    exports dev.rollcall.api.labels;
    exports dev.rollcall.api.policy;
    exports dev.rollcall.api.registration;
    exports dev.rollcall.api.registry;

    // ProviderLookup, in this module, loads the providers for core and the worker.
    uses dev.rollcall.api.discovery.WorkerDiscoveryProvider;
    uses dev.rollcall.api.policy.VersionPolicyProvider;
    uses dev.rollcall.api.registration.WorkerRegistrationProvider;
    // KeyCatalog.all, in this module, lists every module's keys.
    uses dev.rollcall.api.KeyCatalog;

    exports dev.rollcall.api.internal to dev.rollcall.core, dev.rollcall.worker, dev.rollcall.grpc, dev.rollcall.testkit,
            dev.rollcall.console, dev.rollcall.server,
            // the backends' loop threads (DaemonLoop, NamedThreads)
            dev.rollcall.discovery.staticlist, dev.rollcall.discovery.etcd, dev.rollcall.discovery.consul,
            dev.rollcall.discovery.k8s, dev.rollcall.discovery.dns, dev.rollcall.discovery.zookeeper;
}
