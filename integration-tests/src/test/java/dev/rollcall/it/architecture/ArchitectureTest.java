package dev.rollcall.it.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.rollcall.conformance.planted.KitUsesTheTestkit;
import dev.rollcall.core.internal.PlantedRootReachesDown;
import dev.rollcall.core.planted.CoreCallsTheWorker;
import dev.rollcall.core.planted.a.Left;
import dev.rollcall.core.planted.b.Right;
import dev.rollcall.policy.planted.PolicyUsesCoreInternals;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The house points one way: every rule of {@link Architecture} holds over the compiled main classes
 * of every Rollcall module on this class path, and each rule fails on a planted back-reference (the
 * classes under {@code dev.rollcall.core.planted}, {@code dev.rollcall.policy.planted} and
 * {@code dev.rollcall.conformance.planted}, which are test classes of this module and so never part of
 * the checked set).
 */
class ArchitectureTest {

    private static JavaClasses rollcall;

    @BeforeAll
    static void importMainClasses() {
        rollcall = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.rollcall");
    }

    @Test
    void everyModuleOfRollcallIsOnTheClassPathBeingChecked() {
        assertThat(rollcall.stream().map(c -> Architecture.module(c.getPackageName())).distinct())
                .contains("dev.rollcall.api", "dev.rollcall.protocol", "dev.rollcall.core", "dev.rollcall.worker",
                        "dev.rollcall.grpc", "dev.rollcall.policy", "dev.rollcall.discovery.etcd",
                        "dev.rollcall.discovery.staticlist", "dev.rollcall.testkit", "dev.rollcall.console",
                        "dev.rollcall.conformance", "dev.rollcall.local");
    }

    @Test
    void noPackageCycleInAnyModule() {
        Architecture.noPackageCycles().check(rollcall);
    }

    @Test
    void coreInternalsPointOneWayFromTheirRootDown() {
        Architecture.coreInternalRootReachesNoSubpackage().check(rollcall);
        Architecture.coreInternalPackagesFreeOfCycles().check(rollcall);
    }

    @Test
    void apiDependsOnNothingOfRollcall() {
        Architecture.apiDependsOnNothing().check(rollcall);
    }

    @Test
    void backendsAndPoliciesDependOnTheApiAlone() {
        Architecture.pluginsDependOnApiOnly().check(rollcall);
    }

    @Test
    void coreIsTheResolverAloneAndTheWorkerHasNoResolver() {
        Architecture.coreIsTheResolverAlone().check(rollcall);
        Architecture.workerHasNoResolver().check(rollcall);
    }

    @Test
    void nothingShippedUsesTheTestkitAndTheKitKnowsTheProtocolAlone() {
        Architecture.nothingShippedUsesTheTestkit().check(rollcall);
        Architecture.conformanceKnowsTheProtocolAlone().check(rollcall);
    }

    @Test
    void noInternalPackageIsUsedFromOutsideItsModule() {
        Architecture.internalsStayHome().check(rollcall);
    }

    @Test
    void eachRuleFailsOnAPlantedBackReference() {
        JavaClasses planted = new ClassFileImporter().importClasses(CoreCallsTheWorker.class, Left.class, Right.class,
                PolicyUsesCoreInternals.class, KitUsesTheTestkit.class, PlantedRootReachesDown.class);
        assertViolated(Architecture.coreIsTheResolverAlone(), planted, "CoreCallsTheWorker", "RollcallWorker");
        assertViolated(Architecture.noPackageCycles(), planted, "planted.a", "planted.b");
        assertViolated(Architecture.coreInternalRootReachesNoSubpackage(), planted, "PlantedRootReachesDown",
                "SerialContext");
        assertViolated(Architecture.pluginsDependOnApiOnly(), planted, "PolicyUsesCoreInternals", "LiveResolvers");
        assertViolated(Architecture.nothingShippedUsesTheTestkit(), planted, "KitUsesTheTestkit", "HostileText");
        assertViolated(Architecture.conformanceKnowsTheProtocolAlone(), planted, "KitUsesTheTestkit", "HostileText");
        assertViolated(Architecture.internalsStayHome(), planted, "PolicyUsesCoreInternals", "LiveResolvers",
                "InternalSnapshots");
    }

    private static void assertViolated(ArchRule rule, JavaClasses classes, String... named) {
        EvaluationResult result = rule.evaluate(classes);
        assertThat(result.hasViolation()).as(rule.getDescription()).isTrue();
        assertThat(result.getFailureReport().toString()).contains(named);
    }
}
