package dev.rollcall.kubernetes.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import java.util.ArrayList;
import java.util.List;

/**
 * What kubectl prints about a pod's readiness gates, built from the pod as kubectl builds it, so
 * that docs/kubernetes.md shows an operator what they will see. {@code kubectl describe pod} writes
 * {@code "Readiness Gates:\n  Type\tStatus\n"}, then {@code "  %v \t%v \n"} per gate (the status of
 * the condition of that type, {@code <none>} if missing), then the same table under
 * {@code "Conditions:"} for every condition, through a tabwriter with padding 2; it shows no reason or
 * message ({@code kubectl get pod -o yaml} does). {@code kubectl get pods -o wide} shows, in its
 * READINESS GATES column, how many of the pod's gates are {@code True} out of how many it declares.
 */
final class KubectlView {

    private KubectlView() {
    }

    /** The "Readiness Gates:" and "Conditions:" sections of {@code kubectl describe pod}, without trailing newline. */
    static String readinessGates(Pod pod) {
        List<String[]> gates = new ArrayList<>();
        for (PodReadinessGate gate : pod.getSpec().getReadinessGates()) {
            gates.add(new String[] {"  " + gate.getConditionType() + " ",
                    MockCluster.conditionStatus(pod, gate.getConditionType()).orElse("<none>") + " "});
        }
        List<String[]> conditions = new ArrayList<>();
        for (PodCondition condition : pod.getStatus().getConditions()) {
            conditions.add(new String[] {"  " + condition.getType() + " ", condition.getStatus() + " "});
        }
        return "Readiness Gates:\n" + table(gates) + "\nConditions:\n" + table(conditions);
    }

    /** The READINESS GATES column of {@code kubectl get pods -o wide}: gates True / gates declared. */
    static String gateColumn(Pod pod) {
        List<PodReadinessGate> gates = pod.getSpec().getReadinessGates();
        long ready = gates.stream().filter(g -> MockCluster.conditionStatus(pod, g.getConditionType())
                .filter("True"::equals).isPresent()).count();
        return ready + "/" + gates.size();
    }

    /** A block of tab-separated rows under the header {@code "  Type\tStatus"}, as Go's tabwriter aligns it. */
    private static String table(List<String[]> rows) {
        int width = "  Type".length();
        for (String[] row : rows) {
            width = Math.max(width, row[0].length());
        }
        width += 2;
        StringBuilder out = new StringBuilder(pad("  Type", width)).append("Status");
        for (String[] row : rows) {
            out.append('\n').append(pad(row[0], width)).append(row[1]);
        }
        return out.toString();
    }

    private static String pad(String cell, int width) {
        return cell + " ".repeat(width - cell.length());
    }
}
