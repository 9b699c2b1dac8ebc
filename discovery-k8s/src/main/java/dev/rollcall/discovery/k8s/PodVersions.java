package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The version each pod of the namespace claims, from one of its labels ({@code version-label},
 * {@code app.kubernetes.io/version} by default): a fabric8 informer on the namespace's pods (only
 * those matching {@code pod-selector} when it is set), listed in pages of {@value #PAGE} pods.
 *
 * <p><b>Pods held back only by readiness gates.</b> A pod that lists {@code spec.readinessGates}
 * is Ready, and so its endpoint serving, only once an outside controller sets those conditions
 * {@code True}; Rollcall's own gate ({@code rollcall-kubernetes-gate}) sets one from the resolver's
 * verdict, which needs the pod to be a candidate first. {@link #heldOnlyByGates} says which pods wait
 * for nothing but their gates: containers ready ({@code ContainersReady=True}), not being deleted,
 * and readiness gates declared: what the kubelet reports as {@code Ready=False} with reason
 * {@code ReadinessGatesNotReady} while a gate is not {@code True}, and, once the gates are all
 * {@code True}, until the kubelet's {@code Ready=True} and the EndpointSlice controller's
 * {@code serving} have caught up (without that, the gate's own write would drop the pod it lets
 * in). Their endpoints are candidates ({@link SliceCandidates}): the resolver probes every
 * candidate itself before any coordinator uses it.
 *
 * <p><b>What it keeps.</b> Its store keeps of each pod only its name, namespace, UID, resource
 * version, that one label and whether it is held only by gates, never the spec or status: what
 * watching pods costs in heap is a few hundred bytes per pod, not the several kilobytes a whole pod
 * takes ({@code PodWatchCostMeasurement} in the tests shows it).
 *
 * <p><b>Threads.</b> fabric8 calls the event handler and fills the store on the client's threads;
 * {@link #claimed} reads the store from any thread (fabric8's store is thread-safe).
 */
final class PodVersions {

    /** Pods per list page: bounds what a list of a big namespace holds at once. */
    static final long PAGE = 500;
    /**
     * Where the stripped store marks a pod held back only by its readiness gates: an annotation of
     * the kept copy only, never written to the API server.
     */
    static final String HELD_BY_GATES = "rollcall.dev/held-only-by-readiness-gates";

    private final String label;
    private final SharedIndexInformer<Pod> informer;

    private PodVersions(String label, SharedIndexInformer<Pod> informer) {
        this.label = label;
        this.informer = informer;
    }

    /**
     * An informer on the pods of {@code namespace}, not yet started; {@code onChange} runs (on a
     * client thread) when a pod comes or goes or its claimed version changes.
     */
    static PodVersions inform(KubernetesClient client, String namespace, String label, Map<String, String> selector,
                              long resyncMillis, Runnable onChange, ExceptionHandler onError) {
        FilterWatchListDeletable<Pod, PodList, PodResource> selected = client.pods().inNamespace(namespace);
        if (!selector.isEmpty()) {
            selected = selected.withLabels(selector);
        }
        SharedIndexInformer<Pod> informer = selected.withLimit(PAGE).runnableInformer(resyncMillis);
        informer.itemStore(store(label));
        informer.exceptionHandler(onError);
        informer.addEventHandler(new ResourceEventHandler<Pod>() {
            @Override
            public void onAdd(Pod pod) {
                onChange.run();
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                // Pods change their status all the time; only the label and being held by gates matter here.
                if (!Objects.equals(labelOf(before, label), labelOf(after, label))
                        || heldOnlyByGates(before) != heldOnlyByGates(after)) {
                    onChange.run();
                }
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                onChange.run();
            }
        });
        return new PodVersions(label, informer);
    }

    /** Starts listing and watching; completes after the first full list. */
    CompletionStage<Void> start() {
        return informer.start();
    }

    void stop() {
        informer.stop();
    }

    /** The label read, e.g. {@code app.kubernetes.io/version}; null when versions are not read. */
    String label() {
        return label;
    }

    /**
     * The label's value on the pod {@code ref} names, as the API server holds it (not yet checked),
     * or null when the reference is not to a pod, the pod is not (yet) known or has another UID (a
     * pod of the same name that replaced it), or it has no such label.
     */
    String claimed(ObjectReference ref) {
        Pod pod = known(ref);
        return label == null ? null : labelOf(pod, label);
    }

    /**
     * Whether the pod {@code ref} names waits for nothing but its readiness gates (see the class
     * comment); false when the pod is not (yet) known or has another UID.
     */
    boolean heldOnlyByGates(ObjectReference ref) {
        Pod pod = known(ref);
        return pod != null && pod.getMetadata().getAnnotations() != null
                && pod.getMetadata().getAnnotations().containsKey(HELD_BY_GATES);
    }

    /** The kept pod {@code ref} names, or null when unknown or of another UID (a successor of the same name). */
    private Pod known(ObjectReference ref) {
        if (ref == null || !"Pod".equals(ref.getKind()) || ref.getName() == null) {
            return null;
        }
        String namespace = ref.getNamespace() == null ? "" : ref.getNamespace();
        Pod pod = informer.getStore().getByKey(Cache.namespaceKeyFunc(namespace, ref.getName()));
        if (pod == null || pod.getMetadata() == null) {
            return null;
        }
        String uid = ref.getUid();
        if (uid != null && !uid.isBlank() && !uid.equals(pod.getMetadata().getUid())) {
            return null;
        }
        return pod;
    }

    /**
     * Containers ready, not being deleted, and readiness gates declared: the pod waits for its gates
     * alone (the kubelet's {@code ReadinessGatesNotReady}), or for its endpoint to catch up with
     * gates that have just turned {@code True}.
     */
    static boolean heldOnlyByGates(Pod pod) {
        if (pod == null || pod.getMetadata() == null) {
            return false;
        }
        if (pod.getMetadata().getAnnotations() != null
                && pod.getMetadata().getAnnotations().containsKey(HELD_BY_GATES)
                && pod.getSpec() == null && pod.getStatus() == null) {
            return true;    // a kept copy (a pod from the API server always has a spec and a status)
        }
        if (pod.getMetadata().getDeletionTimestamp() != null || pod.getSpec() == null
                || pod.getSpec().getReadinessGates() == null || pod.getSpec().getReadinessGates().isEmpty()
                || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return false;
        }
        Map<String, String> conditions = new java.util.HashMap<>();
        for (var condition : pod.getStatus().getConditions()) {
            if (condition != null && condition.getType() != null) {
                conditions.put(condition.getType(), condition.getStatus());
            }
        }
        if (!"True".equals(conditions.get("ContainersReady"))) {
            return false;
        }
        // Gates all True too: the kubelet has yet to write Ready=True, then the EndpointSlice controller
        // serving=true. Dropping the pod meanwhile would take a worker the gate has just let in out of
        // the fleet until both have caught up (every pod at once in a new Deployment).
        return true;
    }

    /** What the store holds of each pod; for tests. */
    java.util.List<Pod> kept() {
        return informer.getStore().list();
    }

    private static String labelOf(Pod pod, String label) {
        if (label == null || pod == null || pod.getMetadata() == null || pod.getMetadata().getLabels() == null) {
            return null;
        }
        return pod.getMetadata().getLabels().get(label);
    }

    /** The store the informer fills: it keeps of each pod what {@link #claimed} reads, nothing else. */
    static BasicItemStore<Pod> store(String label) {
        return new Stripped(label);
    }

    private static final class Stripped extends BasicItemStore<Pod> {
        private final String label;

        Stripped(String label) {
            super(Cache::metaNamespaceKeyFunc);
            this.label = label;
        }

        @Override
        public Pod put(String key, Pod pod) {
            return super.put(key, strip(pod));
        }

        private Pod strip(Pod pod) {
            ObjectMeta full = pod.getMetadata();
            if (full == null) {
                return pod;
            }
            ObjectMeta kept = new ObjectMeta();
            kept.setName(full.getName());
            kept.setNamespace(full.getNamespace());
            kept.setUid(full.getUid());
            kept.setResourceVersion(full.getResourceVersion());
            String value = label == null ? null : labelOf(pod, label);
            if (value != null) {
                kept.setLabels(Map.of(label, value));
            }
            if (heldOnlyByGates(pod)) {
                kept.setAnnotations(Map.of(HELD_BY_GATES, "true"));
            }
            Pod small = new Pod();
            small.setMetadata(kept);
            return small;
        }
    }
}
