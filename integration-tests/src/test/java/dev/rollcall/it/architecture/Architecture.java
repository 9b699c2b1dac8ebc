package dev.rollcall.it.architecture;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * Which way Rollcall's modules point, as rules over compiled classes. A module is known by its
 * package root ({@code dev.rollcall.core}, {@code dev.rollcall.discovery.etcd}, ...): no package
 * is shared by two modules. A module's API is the packages it names here; every other package of
 * it is internal, usable from another module only through a bridge listed in {@link #BRIDGES}
 * (grpc-java's {@code Internal*} accessors, Rollcall's {@code internal} packages).
 */
final class Architecture {

    /** The packages each module offers to others; a module not listed offers every package without "internal". */
    static final Map<String, Set<String>> API = Map.of(
            "dev.rollcall.api", Set.of("dev.rollcall.api", "dev.rollcall.api.discovery", "dev.rollcall.api.labels",
                    "dev.rollcall.api.policy", "dev.rollcall.api.registration", "dev.rollcall.api.registry"),
            "dev.rollcall.protocol", Set.of("dev.rollcall.protocol", "dev.rollcall.protocol.v1",
                    "dev.rollcall.protocol.spi", "dev.rollcall.protocol.datafusion"),
            "dev.rollcall.core", Set.of("dev.rollcall.core"),
            "dev.rollcall.worker", Set.of("dev.rollcall.worker"),
            "dev.rollcall.grpc", Set.of("dev.rollcall.grpc"));

    /**
     * Internal packages another module may use, and grpc-java-style {@code Internal*} classes of
     * public packages (internal too, whatever their package): name → the modules allowed.
     */
    static final Map<String, Set<String>> BRIDGES = Map.of(
            "dev.rollcall.api.internal", Set.of("dev.rollcall.core", "dev.rollcall.worker", "dev.rollcall.grpc",
                    "dev.rollcall.testkit", "dev.rollcall.console", "dev.rollcall.server",
                    "dev.rollcall.discovery.staticlist",
                    "dev.rollcall.discovery.etcd", "dev.rollcall.discovery.consul", "dev.rollcall.discovery.k8s",
                    "dev.rollcall.discovery.dns", "dev.rollcall.discovery.zookeeper", "dev.rollcall.kubernetes"),
            "dev.rollcall.protocol.internal", Set.of("dev.rollcall.core", "dev.rollcall.worker", "dev.rollcall.grpc",
                    "dev.rollcall.conformance", "dev.rollcall.server"),
            "dev.rollcall.core.internal", Set.of("dev.rollcall.grpc"),
            "dev.rollcall.local.internal", Set.of("dev.rollcall.testkit"),
            "dev.rollcall.api.registry.InternalSnapshots", Set.of("dev.rollcall.core"),
            // one npm range grammar for the semver policy's range and a requirement's
            "dev.rollcall.api.InternalNpmRange", Set.of("dev.rollcall.policy"),
            // rollcall serve's /readyz, /healthz and /metrics on the console's port
            "dev.rollcall.console.InternalConsoleHost", Set.of("dev.rollcall.server"));

    private static final String CORE_INTERNAL = "dev.rollcall.core.internal";

    private static final List<String> TWO_PART_ROOTS = List.of("dev.rollcall.discovery.", "dev.rollcall.schema.");

    private Architecture() {
    }

    /** The module a package belongs to: {@code dev.rollcall.<x>}, or {@code dev.rollcall.discovery.<x>}. */
    static String module(String pkg) {
        if (!pkg.startsWith("dev.rollcall.")) {
            return null;
        }
        String[] parts = pkg.split("\\.");
        int depth = TWO_PART_ROOTS.stream().anyMatch(r -> (pkg + ".").startsWith(r)) ? 4 : 3;
        return String.join(".", List.of(parts).subList(0, Math.min(depth, parts.length)));
    }

    /** An {@code Internal*} class: internal whatever its package. */
    static boolean isInternalClass(JavaClass target) {
        return target.getSimpleName().startsWith("Internal");
    }

    static boolean isApi(String pkg) {
        Set<String> api = API.get(module(pkg));
        return api != null ? api.contains(pkg) : !(pkg + ".").contains(".internal.");
    }

    /** No cycle between any two packages of Rollcall (so none between modules either). */
    static ArchRule noPackageCycles() {
        return slices().matching("dev.rollcall.(**)").should().beFreeOfCycles()
                .as("no package cycle in any module");
    }

    /**
     * Core's {@code internal} root is what its packages and {@code rollcall-grpc} stand on (the
     * bridge, failure text, TLS material): it reaches down into none of the packages below it, so
     * that no arrow runs back up between them.
     */
    static ArchRule coreInternalRootReachesNoSubpackage() {
        return ArchRuleDefinition.noClasses().that().resideInAPackage(CORE_INTERNAL)
                .should().dependOnClassesThat(DescribedPredicate.describe("reside in a package below " + CORE_INTERNAL,
                        c -> c.getPackageName().startsWith(CORE_INTERNAL + ".")))
                .as("core's internal root depends on none of the packages below it");
    }

    /** The packages below core's {@code internal} root point one way among themselves. */
    static ArchRule coreInternalPackagesFreeOfCycles() {
        return slices().matching(CORE_INTERNAL + ".(**)").should().beFreeOfCycles()
                .as("no cycle between the packages of core's internals");
    }

    /**
     * rollcall-api needs the JDK, semver4j (a requirement's npm range) and, optionally, protobuf; of
     * Rollcall, nothing.
     */
    static ArchRule apiDependsOnNothing() {
        return ArchRuleDefinition.classes().that().resideInAPackage("dev.rollcall.api..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.rollcall.api..",
                        "com.google.protobuf..", "org.semver4j..")
                .as("rollcall-api depends on nothing but the JDK and semver4j (and, optionally, protobuf)");
    }

    /**
     * A backend or a policy needs rollcall-api's public packages (and, for Rollcall's own backends,
     * its internal package through the bridge that names them: the loop threads), and its own.
     */
    static ArchRule pluginsDependOnApiOnly() {
        return ArchRuleDefinition.classes().that().resideInAnyPackage("dev.rollcall.discovery..", "dev.rollcall.policy..")
                .should(onlyReachRollcall((from, target) -> module(target.getPackageName()).equals(module(from))
                        || (module(target.getPackageName()).equals("dev.rollcall.api")
                                && ((isApi(target.getPackageName()) && !isInternalClass(target)) || bridged(from, target))),
                        "rollcall-api's public packages or a bridge of it"))
                .as("a discovery backend or a version policy depends on rollcall-api alone");
    }

    /** The resolver ships no worker side, no gRPC integration and no Arrow. */
    static ArchRule coreIsTheResolverAlone() {
        return ArchRuleDefinition.noClasses().that().resideInAPackage("dev.rollcall.core..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.rollcall.worker..", "dev.rollcall.grpc..",
                        "org.apache.arrow..")
                .as("rollcall-core depends on neither rollcall-worker, rollcall-grpc nor Arrow");
    }

    /** The worker ships no resolver. */
    static ArchRule workerHasNoResolver() {
        return ArchRuleDefinition.noClasses().that().resideInAPackage("dev.rollcall.worker..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.rollcall.core..", "dev.rollcall.grpc..")
                .as("rollcall-worker depends on neither rollcall-core nor rollcall-grpc");
    }

    /** The testkit is for tests: nothing that ships reaches into it (the benchmark harness ships nothing). */
    static ArchRule nothingShippedUsesTheTestkit() {
        return ArchRuleDefinition.noClasses().that().resideOutsideOfPackages("dev.rollcall.testkit..",
                        "dev.rollcall.benchmarks..")
                .should().dependOnClassesThat().resideInAPackage("dev.rollcall.testkit..")
                .as("no shipped module depends on rollcall-testkit");
    }

    /** The kit checks a worker from outside, in any language: it knows the protocol, not Rollcall's own sides. */
    static ArchRule conformanceKnowsTheProtocolAlone() {
        return ArchRuleDefinition.noClasses().that().resideInAPackage("dev.rollcall.conformance..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.rollcall.core..", "dev.rollcall.worker..",
                        "dev.rollcall.grpc..", "dev.rollcall.local..", "dev.rollcall.testkit..", "org.junit..",
                        "org.assertj..")
                .as("rollcall-conformance depends on rollcall-api and rollcall-protocol alone, and on no test library");
    }

    /** Another module's internal package only through a bridge that names the user. */
    static ArchRule internalsStayHome() {
        return ArchRuleDefinition.classes().that().resideInAPackage("dev.rollcall..")
                .should(onlyReachRollcall((from, target) -> module(target.getPackageName()).equals(module(from))
                        || (isApi(target.getPackageName()) && !isInternalClass(target))
                        || bridged(from, target), "another module's API or a bridge"))
                .as("no internal package is used from outside its module, but through a listed bridge");
    }

    /** A bridge in {@link #BRIDGES} lets the module of package {@code from} use {@code target}. */
    private static boolean bridged(String from, JavaClass target) {
        return BRIDGES.getOrDefault(isInternalClass(target) ? target.getName() : target.getPackageName(), Set.of())
                .contains(module(from));
    }

    private static ArchCondition<JavaClass> onlyReachRollcall(BiPredicate<String, JavaClass> allowed, String what) {
        return new ArchCondition<>("only depend, within Rollcall, on " + what) {
            @Override
            public void check(JavaClass item, ConditionEvents events) {
                for (Dependency d : item.getDirectDependenciesFromSelf()) {
                    JavaClass target = d.getTargetClass().getBaseComponentType();
                    if (module(target.getPackageName()) != null && !allowed.test(item.getPackageName(), target)) {
                        events.add(SimpleConditionEvent.violated(d, d.getDescription()));
                    }
                }
            }
        };
    }

    static List<ArchRule> all() {
        return List.of(noPackageCycles(), coreInternalRootReachesNoSubpackage(), coreInternalPackagesFreeOfCycles(),
                apiDependsOnNothing(), pluginsDependOnApiOnly(), coreIsTheResolverAlone(),
                workerHasNoResolver(), nothingShippedUsesTheTestkit(), conformanceKnowsTheProtocolAlone(),
                internalsStayHome());
    }

    static DescribedPredicate<JavaClass> rollcall() {
        return JavaClass.Predicates.resideInAPackage("dev.rollcall..");
    }

    static JavaClasses only(JavaClasses classes) {
        return classes.that(rollcall());
    }
}
