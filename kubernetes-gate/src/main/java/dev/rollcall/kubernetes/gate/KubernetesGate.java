package dev.rollcall.kubernetes.gate;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.NamedThreads;
import dev.rollcall.core.SnapshotListener;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.discovery.k8s.KubernetesAccess;
import dev.rollcall.kubernetes.gate.internal.GateKeys;
import dev.rollcall.kubernetes.gate.internal.PodWrites;
import dev.rollcall.kubernetes.gate.internal.Verdicts;
import dev.rollcall.kubernetes.gate.internal.WriterElection;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes rollouts that wait for Rollcall: the resolver's verdict on each worker pod (the pods the
 * {@code k8s} discovery backend finds through EndpointSlices) written as the pod condition named by
 * {@code rollcall.kubernetes.readiness-gate}, which pods list in {@code spec.readinessGates}: a
 * Deployment counts a new pod ready, and takes the next old pod down, only once Rollcall has verified
 * it. {@code True} when the pod's version is compatible (under {@code rollout}: in the chosen cohort
 * or counting toward the next), {@code False} with the policy's reason when it is rejected or not
 * verified yet. With {@code rollcall.kubernetes.pod-deletion-cost}, pods outside the chosen cohort
 * and draining pods get a lower {@code controller.kubernetes.io/pod-deletion-cost}.
 *
 * <pre>{@code
 * try (WorkerResolver resolver = WorkerResolver.fromConfig(config);
 *      KubernetesGate gate = KubernetesGate.start(resolver, config).orElse(null)) { ... }
 * }</pre>
 *
 * <p>Writes are coalesced per pod, sent only when a pod differs from its wish, and at most
 * {@code rollcall.kubernetes.writes-per-second}; among several replicas only the holder of the
 * {@code rollcall.kubernetes.lease.name} Lease writes. The gate never owns the resolver. Thread-safe;
 * {@link #close()} is idempotent and stops writing (what was written stays).
 */
public final class KubernetesGate implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesGate.class);

    private final String gate;
    private final KubernetesClient client;
    private final ExecutorService clientThreads;
    private final PodWrites writes;
    private final WriterElection election;
    private final SnapshotListener.Registration listening;

    private KubernetesGate(String gate, KubernetesClient client, ExecutorService clientThreads, PodWrites writes,
                           WriterElection election, SnapshotListener.Registration listening) {
        this.gate = gate;
        this.client = client;
        this.clientThreads = clientThreads;
        this.writes = writes;
        this.election = election;
        this.listening = listening;
    }

    /**
     * Starts the gate {@code config} asks for, or returns empty when {@code rollcall.kubernetes.readiness-gate}
     * is unset. Reaches the API server as the {@code k8s} discovery backend does
     * ({@code rollcall.discovery.k8s.*}: the same cluster, namespace and account).
     *
     * @throws ConfigurationException naming the key and value at fault: a gate that is not a
     *                                Kubernetes condition type, discovery that is not {@code k8s}, or
     *                                lease durations out of order (naming both keys)
     */
    public static Optional<KubernetesGate> start(WorkerResolver resolver, RollcallConfig config) {
        Objects.requireNonNull(resolver, "resolver");
        Settings settings = config.settings();
        Optional<String> gate = GateKeys.readinessGate(settings);
        if (gate.isEmpty()) {
            return Optional.empty();
        }
        String discovery = settings.raw("rollcall.discovery.type").orElse("");
        if (!"k8s".equals(discovery)) {
            throw new ConfigurationException(GateKeys.READINESS_GATE.name(), GateKeys.READINESS_GATE.name() + "="
                    + PeerText.escape(gate.get(), 64) + " needs rollcall.discovery.type=k8s (the gate is set on the pods of the service's"
                    + " EndpointSlices), not '" + PeerText.escape(discovery, 64) + "'");
        }
        boolean costs = settings.get(GateKeys.POD_DELETION_COST);
        int perSecond = settings.get(GateKeys.WRITES_PER_SECOND);
        GateKeys.LeaseTimings timings = GateKeys.leaseTimings(settings);
        String leaseName = settings.get(GateKeys.LEASE_NAME);
        String identity = WriterElection.uniqueIdentity(settings.find(GateKeys.IDENTITY), System.getenv());
        KubernetesAccess access = KubernetesAccess.fromConfig(config);
        if (!access.watchesPods()) {
            // Without the pod informer, discovery cannot see a pod its gate holds back: none would ever be ready.
            throw new ConfigurationException(GateKeys.READINESS_GATE.name(), GateKeys.READINESS_GATE.name() + "="
                    + gate.get() + " needs the k8s backend to watch pods (rollcall.discovery.k8s.version-label is"
                    + " none): a pod its gate holds back does not serve, and only the pod tells discovery it is a"
                    + " candidate waiting for its gate");
        }
        ExecutorService threads = Executors.newCachedThreadPool(NamedThreads.daemon("rollcall-k8s-gate-client"));
        KubernetesClient client = null;
        PodWrites writes = null;
        WriterElection election;
        try {
            client = access.newClient(threads);
            writes = new PodWrites(client, access.namespace(), gate.get(), perSecond, Clock.systemUTC());
            writes.start();
            election = new WriterElection(client, access.namespace(), leaseName, identity, timings, writes::lead);
            election.start();
        } catch (RuntimeException e) {
            // Nothing started here outlives a start that failed: no writer thread, no client threads.
            if (writes != null) {
                writes.close();
            }
            if (client != null) {
                client.close();
            }
            threads.shutdownNow();
            throw e;
        }
        PodWrites started = writes;
        SnapshotListener.Registration listening = resolver.addListener(snapshot ->
                started.offer(Verdicts.of(snapshot, resolver.policy(), costs)));
        LOG.info("k8s gate: setting condition {} on the pods of {} ({}) while {} holds lease {}", gate.get(),
                access.service(), access.describe(), PeerText.escape(identity, 256), leaseName);
        return Optional.of(new KubernetesGate(gate.get(), client, threads, started, election, listening));
    }

    /** The condition type this gate sets, e.g. {@code rollcall.dev/compatible}. */
    public String gate() {
        return gate;
    }

    /** Patches sent to the API server so far. */
    public long patches() {
        return writes.patches();
    }

    /**
     * This process's {@code holderIdentity} in the Lease: {@code rollcall.kubernetes.identity} (else
     * {@code HOSTNAME}), {@code _} and a random suffix, unique to the process.
     */
    public String identity() {
        return election.identity();
    }

    /**
     * Stops writing, releases the Lease if this replica holds it (another replica takes it over at
     * its next try), and closes the client. Blocks while the release is sent: at most the k8s
     * backend's request timeout or two when the API server does not answer.
     */
    @Override
    public void close() {
        try {
            listening.close();
        } finally {
            try {
                election.close();
            } finally {
                try {
                    writes.close();
                } finally {
                    client.close();
                    clientThreads.shutdownNow();
                }
            }
        }
    }

    @Override
    public String toString() {
        return "KubernetesGate[" + gate + "]";
    }
}
