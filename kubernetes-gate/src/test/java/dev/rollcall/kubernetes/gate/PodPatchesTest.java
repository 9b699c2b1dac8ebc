package dev.rollcall.kubernetes.gate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.kubernetes.gate.internal.PodPatches;
import dev.rollcall.kubernetes.gate.internal.PodVerdict;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The patches themselves: only for pods that declare the gate, and each tested against the pod it came from. */
class PodPatchesTest {

    private static final PodVerdict OUTSIDE = new PodVerdict("p", "uid-1", PodVerdict.Condition.FALSE, "Incompatible",
            "version '2.0.0' is outside ^1.0.0", PodVerdict.Cost.OUTSIDE);

    @Test
    void aPodThatDoesNotDeclareTheGateGetsNeitherPatch() {
        Pod plain = new PodBuilder().withNewMetadata().withName("p").withUid("uid-1").withResourceVersion("7")
                .endMetadata().withNewSpec().endSpec().build();
        assertThat(PodPatches.condition(plain, MockCluster.GATE, OUTSIDE, Instant.EPOCH)).isNull();
        assertThat(PodPatches.deletionCost(plain, MockCluster.GATE, OUTSIDE)).isNull();
    }

    @Test
    void theDeletionCostIsSetTestingTheResourceVersionItWasComputedFromAndNotSentAgainOnceThere() {
        Pod gated = new PodBuilder().withNewMetadata().withName("p").withUid("uid-1").withResourceVersion("7")
                .endMetadata().withNewSpec().addNewReadinessGate().withConditionType(MockCluster.GATE)
                .endReadinessGate().endSpec().build();
        assertThat(PodPatches.deletionCost(gated, MockCluster.GATE, OUTSIDE)).isEqualTo(
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\"},"
                        + "{\"op\":\"add\",\"path\":\"/metadata/annotations\","
                        + "\"value\":{\"controller.kubernetes.io/pod-deletion-cost\":\"-100\"}}]");
        Pod costed = new PodBuilder(gated).editMetadata().addToAnnotations(PodPatches.DELETION_COST, "-100")
                .endMetadata().build();
        assertThat(PodPatches.deletionCost(costed, MockCluster.GATE, OUTSIDE)).isNull();
        PodVerdict chosen = new PodVerdict("p", "uid-1", PodVerdict.Condition.TRUE, "Compatible", "ok",
                PodVerdict.Cost.CLEAR);
        assertThat(PodPatches.deletionCost(costed, MockCluster.GATE, chosen)).isEqualTo(
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\"},"
                        + "{\"op\":\"remove\",\"path\":\"/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost\"}]");
    }
}
