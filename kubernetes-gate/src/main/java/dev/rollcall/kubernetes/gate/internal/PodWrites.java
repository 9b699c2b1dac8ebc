package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.internal.NamedThreads;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Clock;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the worker pods to the gate's wishes: the latest wish per pod (coalesced: a pod whose wish
 * changes ten times before its turn is written once), compared with the pod as an informer last saw
 * it (written only on change), sent by one thread at most {@code writes-per-second} patches a second.
 * Writes only while leading ({@link #lead}).
 *
 * <p>Threading: {@link #offer} and {@link #lead} from any thread; one named thread writes.
 */
public final class PodWrites implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodWrites.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String gate;
    private final long nanosPerWrite;
    private final Clock clock;
    private final SharedIndexInformer<Pod> pods;
    private final Map<String, PodVerdict> wishes = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    /** Pods to look at again; guarded by {@link #lock}. */
    private final Set<String> dirty = new LinkedHashSet<>();
    private final AtomicLong patches = new AtomicLong();
    private final Thread writer;
    private volatile boolean leading;
    private volatile boolean closed;

    public PodWrites(KubernetesClient client, String namespace, String gate, int writesPerSecond, Clock clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.gate = Objects.requireNonNull(gate, "gate");
        this.nanosPerWrite = TimeUnit.SECONDS.toNanos(1) / writesPerSecond;
        this.clock = Objects.requireNonNull(clock, "clock");
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
            }
        });
        this.writer = NamedThreads.daemon("rollcall-k8s-gate-writer").newThread(this::run);
    }

    /** Starts the pod informer and the writer. */
    public void start() {
        pods.start();
        writer.start();
    }

    /** The wishes of the newest snapshot: replaces every earlier wish. */
    public void offer(Map<String, PodVerdict> newWishes) {
        synchronized (lock) {
            wishes.keySet().removeIf(pod -> !newWishes.containsKey(pod));
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

    private void touch(String pod) {
        synchronized (lock) {
            if (wishes.containsKey(pod)) {
                dirty.add(pod);
                lock.notifyAll();
            }
        }
    }

    private void run() {
        long nextWrite = System.nanoTime();
        while (!closed) {
            String pod;
            synchronized (lock) {
                while (!closed && (!leading || dirty.isEmpty())) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                var it = dirty.iterator();
                pod = it.next();
                it.remove();
            }
            PodVerdict wish = wishes.get(pod);
            Pod current = pods.getStore().getByKey(Cache.namespaceKeyFunc(namespace, pod));
            if (wish == null || current == null || current.getMetadata().getDeletionTimestamp() != null
                    || (!wish.uid().isEmpty() && !wish.uid().equals(current.getMetadata().getUid()))) {
                continue;
            }
            for (int kind = 0; kind < 2; kind++) {
                String patch = kind == 0 ? PodPatches.condition(current, gate, wish, clock.instant())
                        : PodPatches.deletionCost(current, wish);
                if (patch == null) {
                    continue;
                }
                long wait = nextWrite - System.nanoTime();
                if (wait > 0) {
                    try {
                        TimeUnit.NANOSECONDS.sleep(wait);  // the rate limit itself, not a synchronisation
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                nextWrite = Math.max(nextWrite, System.nanoTime() - nanosPerWrite) + nanosPerWrite;
                try {
                    patches.incrementAndGet();
                    if (kind == 0) {
                        client.pods().inNamespace(namespace).withName(pod).subresource("status")
                                .patch(PatchContext.of(PatchType.JSON), patch);
                    } else {
                        client.pods().inNamespace(namespace).withName(pod)
                                .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
                    }
                    break;  // one patch per turn: the informer's event about it brings the pod back
                } catch (KubernetesClientException e) {
                    LOG.warn("k8s gate: cannot patch pod {}/{}{}: {} {}", namespace, PeerText.escape(pod),
                            kind == 0 ? " (status)" : "", e.getCode(), PeerText.escape(String.valueOf(e.getMessage()), 512));
                    break;
                }
            }
        }
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
