/**
 * Rollcall's API: the SPIs a discovery backend, a version policy or a worker registration
 * implements, the value types they exchange, and the read-only registry views a coordinator
 * consumes. It requires nothing at run time; {@code com.google.protobuf} only for the schema views
 * ({@code ProtoSymbols}, {@code KeyExtractors}).
 *
 * <p>A policy or backend in a named module declares itself with {@code provides}, e.g.
 * {@code provides dev.rollcall.api.policy.VersionPolicyProvider with com.example.MyPolicyProvider;}.
 */
module dev.rollcall.api {
    requires static com.google.protobuf;

    exports dev.rollcall.api;
    exports dev.rollcall.api.discovery;
    exports dev.rollcall.api.labels;
    exports dev.rollcall.api.policy;
    exports dev.rollcall.api.registration;
    exports dev.rollcall.api.registry;
}
