package dev.rollcall.kubernetes.gate;

import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * Plays Kubernetes for a Deployment of worker pods that declare the gate in {@code spec.readinessGates},
 * against the mock API server of a {@link MockCluster}: the Deployment controller with
 * {@code strategy: RollingUpdate, maxSurge: 1, maxUnavailable: 0}, the kubelet and the EndpointSlice
 * controller. Each pod is served by a real loopback worker of its version ({@link WorkerFleet}).
 *
 * <p><b>The kubelet</b> (as KEP-580, "pod readiness gates", and the pod lifecycle page say): a pod is
 * {@code Ready} only when all its containers are ready <i>and</i> every condition its
 * {@code spec.readinessGates} lists is in {@code status.conditions} with status {@code True}; a gate
 * condition that is missing counts as {@code False}. While the containers are ready but a gate is not
 * {@code True}, the kubelet writes {@code ContainersReady=True} and {@code Ready=False} with reason
 * {@code ReadinessGatesNotReady}. The kubelet never writes the gate's condition itself: an outside
 * controller (here Rollcall) does, and the kubelet recomputes {@code Ready} when it changes. Here every
 * container is ready as soon as its worker listens, so {@code Ready} follows the gate alone.
 *
 * <p><b>The EndpointSlice controller</b>: a pod's endpoint is {@code ready} and {@code serving} while the
 * pod is {@code Ready}; a pod being deleted gets {@code terminating=true}, {@code ready=false} (and
 * {@code serving} as its readiness was), then its endpoint goes away with it.
 *
 * <p><b>The Deployment controller</b>, {@code maxSurge: 1, maxUnavailable: 0}: at most one pod above the
 * replica count, never fewer available (Ready) pods than the replica count. So it creates one new pod,
 * waits until that pod is Ready, deletes one old pod, and goes on; it never deletes an old pod before a
 * new one is Ready. A new pod that never becomes Ready stops the rollout there, with every old pod up
 * ({@code kubectl rollout status} keeps waiting; {@code progressDeadlineSeconds} only reports it).
 *
 * <p>Threading: {@link #rollout} runs on its own thread; the kubelet on one thread of its own. Every
 * state of every pod the kubelet sees is kept in {@link #seen()}.
 */
final class DeploymentSimulator implements AutoCloseable {

    static final String DEPLOYMENT = "workers";

    /** One state of one pod as the kubelet saw it. */
    record PodState(String pod, String version, String gate, String gateReason, String ready,
                    Optional<String> deletionCost) {
    }

    private final MockCluster cluster;
    private final WorkerFleet fleet;
    private final Map<String, FleetWorker> workers = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<Void>> readyOnce = new ConcurrentHashMap<>();
    private final List<String> live = new CopyOnWriteArrayList<>();
    private final List<PodState> seen = new CopyOnWriteArrayList<>();
    private final Map<String, PodState> lastSeen = new ConcurrentHashMap<>();
    private final List<String> deleted = new CopyOnWriteArrayList<>();
    private final ExecutorService kubelet = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-kubelet"));
    private final ExecutorService controller = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-deployment"));
    private final SharedIndexInformer<Pod> pods;
    private volatile Consumer<String> onReady = pod -> { };
    private volatile String status = "";
    private int created;

    DeploymentSimulator(MockCluster cluster, WorkerFleet fleet) {
        this.cluster = cluster;
        this.fleet = fleet;
        this.pods = cluster.client().pods().inNamespace(MockCluster.NS).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                kubelet.execute(() -> sync(pod.getMetadata().getName()));
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                kubelet.execute(() -> sync(after.getMetadata().getName()));
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
            }
        });
    }

    /** Called on the kubelet's thread with a pod's name when it turns Ready, before its endpoint says so. */
    void onReady(Consumer<String> hook) {
        this.onReady = hook;
    }

    /** Creates {@code replicas} pods of {@code version} at once (a new Deployment) and waits until all are Ready. */
    void deploy(String version, int replicas) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            all.add(createPod(version));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        status = "deployment \"" + DEPLOYMENT + "\" successfully rolled out";
    }

    /**
     * Rolls the Deployment to {@code version} as a RollingUpdate with {@code maxSurge: 1, maxUnavailable: 0};
     * completes when every old pod is gone, and never while a new pod is not Ready.
     */
    CompletableFuture<Void> rollout(String version) {
        return CompletableFuture.runAsync(() -> {
            List<String> old = new ArrayList<>(live);
            int replicas = old.size();
            for (int updated = 1; !old.isEmpty(); updated++) {
                CompletableFuture<Void> ready = createPod(version);
                status = "Waiting for deployment \"" + DEPLOYMENT + "\" rollout to finish: " + (updated - 1) + " of "
                        + replicas + " updated replicas are available...";
                ready.join();
                String victim = old.remove(0);
                status = "Waiting for deployment \"" + DEPLOYMENT + "\" rollout to finish: " + (old.size() + 1)
                        + " old replicas are pending termination...";
                terminate(victim);
            }
            status = "deployment \"" + DEPLOYMENT + "\" successfully rolled out";
        }, controller);
    }

    /** What {@code kubectl rollout status deployment/workers} prints now. */
    String status() {
        return status;
    }

    /** The pods that exist now, oldest first. */
    List<String> live() {
        return List.copyOf(live);
    }

    /** The pods the Deployment controller deleted, in order. */
    List<String> deleted() {
        return List.copyOf(deleted);
    }

    /** Every state of every pod the kubelet saw, in order. */
    synchronized List<PodState> seen() {
        return List.copyOf(seen);
    }

    /** The last state of {@code pod} the kubelet saw. */
    synchronized PodState latest(String pod) {
        return lastSeen.get(pod);
    }

    private synchronized CompletableFuture<Void> createPod(String version) {
        String name = DEPLOYMENT + "-" + version.replace(".", "") + "-" + created++;
        FleetWorker worker = fleet.addWorker(version);
        workers.put(name, worker);
        CompletableFuture<Void> ready = new CompletableFuture<>();
        readyOnce.put(name, ready);
        live.add(name);
        cluster.addGatedPod(name, version, worker.endpoint().port());
        return ready;
    }

    private void terminate(String pod) {
        FleetWorker worker = workers.remove(pod);
        boolean wasReady = ready(cluster.pod(pod));
        cluster.slice(pod, worker.endpoint().port(), false, wasReady, true);
        fleet.retire(worker);
        cluster.removeSlice(pod);
        cluster.client().pods().inNamespace(MockCluster.NS).withName(pod).delete();
        live.remove(pod);
        deleted.add(pod);
    }

    /** The kubelet's turn on one pod: Ready = ContainersReady and every readiness gate True. */
    private void sync(String name) {
        for (int attempt = 0; ; attempt++) {
            Pod pod = cluster.pod(name);
            if (pod == null || !workers.containsKey(name)) {
                return;
            }
            record(pod);
            boolean ready = containersReady(pod) && gatesTrue(pod);
            if (ready == ready(pod)) {
                return;
            }
            if (ready) {
                onReady.accept(name);
            }
            // As the kubelet's status manager: a patch of the pod it read, refused if anyone wrote it since.
            List<PodCondition> conditions = pod.getStatus().getConditions();
            int index = -1;
            for (int i = 0; i < conditions.size(); i++) {
                if ("Ready".equals(conditions.get(i).getType())) {
                    index = i;
                }
            }
            Map<String, Object> value = new LinkedHashMap<>();
            value.put("type", "Ready");
            value.put("status", ready ? "True" : "False");
            value.put("reason", ready ? null : "ReadinessGatesNotReady");
            List<Map<String, Object>> patch = List.of(
                    Map.of("op", "test", "path", "/metadata/resourceVersion",
                            "value", pod.getMetadata().getResourceVersion()),
                    index < 0 ? Map.of("op", "add", "path", "/status/conditions/-", "value", value)
                            : Map.of("op", "replace", "path", "/status/conditions/" + index, "value", value));
            try {
                cluster.client().pods().inNamespace(MockCluster.NS).withName(name).subresource("status")
                        .patch(PatchContext.of(PatchType.JSON), Serialization.asJson(patch));
            } catch (KubernetesClientException e) {
                if ((e.getCode() == 409 || e.getCode() == 422) && attempt < 100) {
                    continue;   // someone (the gate) wrote the pod meanwhile: read it again
                }
                throw e;
            }
            FleetWorker worker = workers.get(name);
            if (worker != null) {
                cluster.slice(name, worker.endpoint().port(), ready);
            }
            if (ready) {
                readyOnce.get(name).complete(null);
            }
            return;
        }
    }

    private synchronized void record(Pod pod) {
        String gate = MockCluster.conditionStatus(pod, MockCluster.GATE).orElse("<none>");
        String ready = MockCluster.conditionStatus(pod, "Ready").orElse("<none>");
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        Optional<String> cost = Optional.ofNullable(annotations == null ? null
                : annotations.get("controller.kubernetes.io/pod-deletion-cost"));
        String reason = pod.getStatus().getConditions().stream().filter(c -> MockCluster.GATE.equals(c.getType()))
                .map(PodCondition::getReason).findFirst().orElse("");
        PodState state = new PodState(pod.getMetadata().getName(),
                pod.getMetadata().getLabels().get("app.kubernetes.io/version"), gate, reason, ready, cost);
        if (!state.equals(lastSeen.put(state.pod(), state))) {
            seen.add(state);
        }
    }

    private static boolean containersReady(Pod pod) {
        return MockCluster.conditionStatus(pod, "ContainersReady").filter("True"::equals).isPresent();
    }

    private static boolean gatesTrue(Pod pod) {
        for (PodReadinessGate gate : pod.getSpec().getReadinessGates()) {
            if (MockCluster.conditionStatus(pod, gate.getConditionType()).filter("True"::equals).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    private static boolean ready(Pod pod) {
        return pod != null && MockCluster.conditionStatus(pod, "Ready").filter("True"::equals).isPresent();
    }

    @Override
    public void close() {
        pods.close();
        controller.shutdownNow();
        kubelet.shutdownNow();
    }
}
