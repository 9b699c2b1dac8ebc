package dev.rollcall.kubernetes.gate.internal;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The patches that bring one pod to its wish, or none when it already carries it: "only on change"
 * is decided here, against the pod as last seen. Pure functions.
 *
 * <p>The condition goes to {@code pods/status} as a JSON Patch (RFC 6902) that first tests the
 * pod's {@code resourceVersion}: the API server applies it only to the pod this patch was computed
 * from, so the kubelet's own condition writes are never overwritten, and a pod that changed meanwhile
 * answers 422 (the gate computes again from the newer pod). The deletion cost goes to the pod as a
 * JSON Patch of one annotation, testing the {@code resourceVersion} the same way (nothing else is
 * touched). Neither is ever made for a pod that does not declare the gate.
 */
public final class PodPatches {

    /** Kubernetes' annotation for the order of a ReplicaSet's scale-down (lower: deleted first). */
    public static final String DELETION_COST = "controller.kubernetes.io/pod-deletion-cost";

    private PodPatches() {
    }

    /**
     * The JSON Patch for {@code pods/status} that sets condition {@code gate} as {@code wish} says, or
     * null when nothing needs to change or the pod does not declare the gate in its
     * {@code spec.readinessGates} (a condition it does not wait for would be a write for nothing).
     */
    public static String condition(Pod pod, String gate, PodVerdict wish, Instant now) {
        if (wish.condition() == PodVerdict.Condition.UNCHANGED || !declares(pod, gate)) {
            return null;
        }
        List<PodCondition> conditions = pod.getStatus() == null || pod.getStatus().getConditions() == null
                ? List.of() : pod.getStatus().getConditions();
        int index = -1;
        for (int i = 0; i < conditions.size(); i++) {
            if (gate.equals(conditions.get(i).getType())) {
                index = i;
                break;
            }
        }
        PodCondition current = index < 0 ? null : conditions.get(index);
        if (wish.condition() == PodVerdict.Condition.FALSE_UNLESS_TRUE && current != null
                && "True".equals(current.getStatus())) {
            return null;
        }
        String status = wish.condition() == PodVerdict.Condition.TRUE ? "True" : "False";
        if (current != null && status.equals(current.getStatus()) && wish.reason().equals(current.getReason())
                && wish.message().equals(current.getMessage())) {
            return null;
        }
        String since = current != null && status.equals(current.getStatus()) && current.getLastTransitionTime() != null
                ? current.getLastTransitionTime() : now.toString();
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("type", gate);
        value.put("status", status);
        value.put("reason", wish.reason());
        value.put("message", wish.message());
        value.put("lastProbeTime", null);
        value.put("lastTransitionTime", since);
        List<Map<String, Object>> ops = new ArrayList<>();
        ops.add(op("test", "/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
        if (index >= 0) {
            ops.add(op("replace", "/status/conditions/" + index, value));
        } else if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
            ops.add(op("add", "/status/conditions/-", value));
        } else {
            ops.add(op("add", "/status/conditions", List.of(value)));
        }
        return Serialization.asJson(ops);
    }

    /**
     * The JSON Patch for the pod that sets or removes the deletion cost as {@code wish} says, testing
     * the pod's {@code resourceVersion} first as {@link #condition} does; or null when the cost is as
     * wished or the pod does not declare the gate (a pod that does not ask is never touched).
     */
    public static String deletionCost(Pod pod, String gate, PodVerdict wish) {
        if (wish.cost() == PodVerdict.Cost.UNCHANGED || !declares(pod, gate)) {
            return null;
        }
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String current = annotations == null ? null : annotations.get(DELETION_COST);
        String wished = wish.cost().value();
        if (Objects.equals(current, wished)) {
            return null;
        }
        List<Map<String, Object>> ops = new ArrayList<>();
        ops.add(op("test", "/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
        String path = "/metadata/annotations/" + DELETION_COST.replace("~", "~0").replace("/", "~1");
        if (wished == null) {
            Map<String, Object> remove = new LinkedHashMap<>();
            remove.put("op", "remove");
            remove.put("path", path);
            ops.add(remove);
        } else if (annotations == null || annotations.isEmpty()) {
            // The API server leaves an empty map out of the pod: "add" under a member it lacks fails.
            ops.add(op("add", "/metadata/annotations", Map.of(DELETION_COST, wished)));
        } else {
            ops.add(op("add", path, wished));
        }
        return Serialization.asJson(ops);
    }

    /** Whether {@code pod} waits for condition {@code gate} ({@code spec.readinessGates}). */
    public static boolean declares(Pod pod, String gate) {
        if (pod.getSpec() == null || pod.getSpec().getReadinessGates() == null) {
            return false;
        }
        for (PodReadinessGate declared : pod.getSpec().getReadinessGates()) {
            if (gate.equals(declared.getConditionType())) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("path", path);
        m.put("value", value);
        return m;
    }
}
