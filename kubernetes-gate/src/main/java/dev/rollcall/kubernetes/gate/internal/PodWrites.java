package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.kubernetes.gate.internal.WriteDoors.Door;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Clock;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the worker pods to the gate's wishes, as a controller does: the latest wish per pod
 * (coalesced: a pod whose wish changes ten times before its turn is written once), written only when
 * the pod differs from it, by one thread, at most {@code writes-per-second} patches a second with a
 * burst of one second's worth ({@link WriteBudget}). Writes only while leading ({@link #lead}).
 *
 * <p>Only pods that ask: nothing is written to a pod that does not declare the gate in
 * {@code spec.readinessGates}, nor to a pod whose UID is not the one discovery reported (a pod
 * replaced under the same name, or an EndpointSlice written by hand naming some other pod).
 *
 * <p>"Differs" is judged against the pod as the informer last saw it, and, until the informer catches
 * up, against the pod this writer's own patch returned: every patch tests the {@code resourceVersion}
 * it was computed from, so while the informer still shows that version the write is newer, and once it
 * shows any other the informer is at least as new as the write. A conflict (the pod changed between
 * read and patch) waits for the informer's newer pod and computes again from it.
 *
 * <p>Failures are the API server's, never the resolver's: a 403 names the verb and resource the Role
 * lacks, a silent or failing server is retried with backoff ({@link WriteDoors}); the patch calls
 * time out after the client's request timeout ({@code rollcall.discovery.k8s.request-timeout}).
 *
 * <p>Threading: {@link #offer} and {@link #lead} from any thread, and never block on the API server
 * (the resolver's listener calls {@link #offer}); one named thread writes.
 */
public final class PodWrites implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodWrites.class);

    /**
     * What this writer's last patch of a pod did, until the informer shows a newer pod.
     *
     * @param superseded resource versions older than the pod as the server holds it now
     * @param result     the pod the patch returned, or null after a conflict (the informer will bring
     *                   the newer pod)
     */
    private record Written(Set<String> superseded, Pod result) {
    }

    private final KubernetesClient client;
    private final String namespace;
    private final String gate;
    private final Clock clock;
    private final SharedIndexInformer<Pod> pods;
    private final Object lock = new Object();
    // Guarded by lock:
    private final Map<String, PodVerdict> wishes = new HashMap<>();
    private final Set<String> dirty = new LinkedHashSet<>();
    /** Pods whose patch waits for a shut door, by door. */
    private final Map<Door, Set<String>> parked = new EnumMap<>(Door.class);
    private final Map<String, Written> written = new HashMap<>();
    private final WriteBudget budget;
    private final WriteDoors doors;
    private boolean leading;
    private boolean closed;
    /** Whether the writer is on a pod's turn (between {@link #next} and the next call of it). */
    private boolean busy;

    private final AtomicLong patches = new AtomicLong();
    private final Thread writer;

    /**
     * A writer of condition {@code gate} on the pods of {@code namespace}, through {@code client} (whose
     * request timeout bounds each patch), at most {@code writesPerSecond} patches a second; nothing
     * happens before {@link #start()}, and nothing is written before {@link #lead lead(true)}.
     */
    public PodWrites(KubernetesClient client, String namespace, String gate, int writesPerSecond, Clock clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.gate = Objects.requireNonNull(gate, "gate");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.budget = new WriteBudget(writesPerSecond, System::nanoTime);
        this.doors = new WriteDoors(namespace);
        this.pods = client.pods().inNamespace(namespace).withLimit(500L).runnableInformer(0);
        this.pods.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                touch(pod.getMetadata().getName());
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                touch(after.getMetadata().getName());
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                synchronized (lock) {
                    written.remove(pod.getMetadata().getName());
                }
            }
        });
        this.writer = NamedThreads.daemon("rollcall-k8s-gate-writer").newThread(this::run);
    }

    /** Starts the pod informer and the writer. */
    public void start() {
        pods.start();
        writer.start();
    }

    /** The wishes of the newest snapshot: replaces every earlier wish. Never blocks on the API server. */
    public void offer(Map<String, PodVerdict> newWishes) {
        synchronized (lock) {
            wishes.keySet().removeIf(pod -> !newWishes.containsKey(pod));
            written.keySet().removeIf(pod -> !newWishes.containsKey(pod));
            newWishes.forEach((pod, wish) -> {
                if (!wish.equals(wishes.put(pod, wish))) {
                    dirty.add(pod);
                }
            });
            lock.notifyAll();
        }
    }

    /** Whether this replica writes: when it starts leading, every wish is looked at again. */
    public void lead(boolean lead) {
        synchronized (lock) {
            leading = lead;
            if (lead) {
                dirty.addAll(wishes.keySet());
            }
            lock.notifyAll();
        }
    }

    /** Patches sent so far (each accepted or refused by the API server). */
    public long patches() {
        return patches.get();
    }

    /**
     * Whether the writer has nothing to do: the informer has listed the pods, and every pod's wish
     * has been looked at since it last changed (written, found as wished, or not the writer's to
     * write), none waiting for a shut door or a token.
     */
    public boolean idle() {
        synchronized (lock) {
            return pods.hasSynced() && dirty.isEmpty() && !busy
                    && parked.values().stream().allMatch(Set::isEmpty);
        }
    }

    private void touch(String pod) {
        synchronized (lock) {
            if (wishes.containsKey(pod)) {
                dirty.add(pod);
                lock.notifyAll();
            }
        }
    }

    private void run() {
        try {
            String pod;
            while ((pod = next()) != null) {
                try {
                    bring(pod);
                } catch (RuntimeException e) {
                    // A bug here must not end the writer: the next change of the pod tries again.
                    LOG.error("k8s gate: cannot bring pod {}/{} to its wish", PeerText.escape(namespace),
                            PeerText.escape(pod), e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The next pod to look at, waiting until there is one and this replica leads; null once closed. */
    private String next() throws InterruptedException {
        synchronized (lock) {
            busy = false;
            while (!closed) {
                long now = System.nanoTime();
                long opening = Long.MAX_VALUE;
                for (Map.Entry<Door, Set<String>> waiting : parked.entrySet()) {
                    long shut = doors.shutFor(waiting.getKey(), now);
                    if (shut == 0) {
                        dirty.addAll(waiting.getValue());
                        waiting.getValue().clear();
                    } else if (!waiting.getValue().isEmpty()) {
                        opening = Math.min(opening, shut);
                    }
                }
                if (leading && !dirty.isEmpty()) {
                    var it = dirty.iterator();
                    String pod = it.next();
                    it.remove();
                    busy = true;
                    return pod;
                }
                if (opening == Long.MAX_VALUE) {
                    lock.wait();
                } else {
                    TimeUnit.NANOSECONDS.timedWait(lock, opening);
                }
            }
            return null;
        }
    }

    /** One turn of one pod: the condition, then the deletion cost, each patched only if it differs. */
    private void bring(String name) throws InterruptedException {
        Pod seen = pods.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name));
        PodVerdict wish;
        Pod view;
        Set<String> superseded = new HashSet<>();
        synchronized (lock) {
            wish = wishes.get(name);
            if (wish == null || !asks(seen, wish)) {
                written.remove(name);
                return;
            }
            Written w = written.get(name);
            if (w != null && w.superseded().contains(seen.getMetadata().getResourceVersion())) {
                view = w.result();
                superseded.addAll(w.superseded());
            } else {
                written.remove(name);
                view = seen;
            }
        }
        if (view == null) {
            return;     // a conflict: the informer's next event about the pod brings it back
        }
        for (Door door : Door.values()) {
            String patch = door == Door.STATUS ? PodPatches.condition(view, gate, wish, clock.instant())
                    : PodPatches.deletionCost(view, gate, wish);
            if (patch == null) {
                continue;
            }
            if (!awaitTurn(name, wish, door)) {
                return;
            }
            superseded.add(view.getMetadata().getResourceVersion());
            view = send(name, door, patch, superseded);
            if (view == null) {
                return;
            }
        }
    }

    /** Whether the pod may get the wish: it declares the gate, is not going, and is the pod discovery saw. */
    private boolean asks(Pod pod, PodVerdict wish) {
        return pod != null && pod.getMetadata().getDeletionTimestamp() == null && PodPatches.declares(pod, gate)
                && !wish.uid().isEmpty() && wish.uid().equals(pod.getMetadata().getUid());
    }

    /**
     * Waits for a token of the budget and takes it; false when the patch is not to be sent now (the
     * door is shut: the pod is parked; the wish changed meanwhile: it is dirty again; not leading, closed).
     */
    private boolean awaitTurn(String name, PodVerdict wish, Door door) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                if (closed || !leading || !wish.equals(wishes.get(name))) {
                    return false;
                }
                if (doors.shutFor(door, System.nanoTime()) > 0) {
                    park(door, name);
                    return false;
                }
                long wait = budget.nanosUntilToken();
                if (wait == 0) {
                    budget.take();
                    return true;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, wait);
            }
        }
    }

    /** Sends one patch; the pod it returned, or null when this turn ends (refused, failed, conflict, gone). */
    private Pod send(String name, Door door, String patch, Set<String> superseded) {
        patches.incrementAndGet();
        PodResource resource = client.pods().inNamespace(namespace).withName(name);
        try {
            PatchContext json = PatchContext.of(PatchType.JSON);
            Pod result = door == Door.STATUS ? resource.subresource("status").patch(json, patch)
                    : resource.patch(json, patch);
            synchronized (lock) {
                doors.succeeded(door);
                written.put(name, new Written(Set.copyOf(superseded), result));
            }
            return result;
        } catch (KubernetesClientException e) {
            synchronized (lock) {
                switch (e.getCode()) {
                    case 409, 422 -> written.put(name, new Written(Set.copyOf(superseded), null));
                    case 404 -> written.remove(name);
                    case 403 -> {
                        doors.refused(door, System.nanoTime());
                        park(door, name);
                    }
                    default -> {
                        if (closed) {
                            return null;
                        }
                        doors.failed(door, name, describe(e), System.nanoTime());
                        park(door, name);
                    }
                }
            }
            return null;
        }
    }

    /** Guarded by {@link #lock}. */
    private void park(Door door, String pod) {
        parked.computeIfAbsent(door, d -> new LinkedHashSet<>()).add(pod);
    }

    private static String describe(KubernetesClientException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String what = e.getCode() > 0 ? "HTTP " + e.getCode() + " " + e.getMessage()
                : String.valueOf(e.getMessage());
        return root == e ? what : what + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        writer.interrupt();
        pods.stop();
    }
}
