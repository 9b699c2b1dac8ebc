package dev.rollcall.server.internal.grpc;

import com.google.protobuf.CodedOutputStream;
import dev.rollcall.api.Capability;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.server.internal.WorkerZone;
import dev.rollcall.protocol.v1.FleetWorkerState;
import dev.rollcall.protocol.v1.Selection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns the resolver's snapshots into {@code rollcall.v1.FleetSnapshot} bytes, once per publish.
 * Each worker's entry is encoded once per {@link WorkerStatus} object and kept while the next
 * snapshot hands the same object over again (the resolver reuses the statuses of workers that did
 * not change), so a publish encodes only what changed and copies the rest. The same pass makes the
 * publish's change message against the previous one ({@code base_number}): the entries that are new
 * objects with other bytes than the URL's previous entry, and the previous URLs now absent.
 * A snapshot narrowed to requirements ({@link FleetSnapshot#requiring}) builds its
 * {@code LACKS_REQUIREMENT} statuses anew each time, so those are matched by what they wrap instead. Peer
 * text (versions, instance ids, labels, capabilities, reasons) is escaped and bounded with
 * {@link PeerText} on the way out.
 *
 * <p>Not thread-safe: one thread (the resolver listener's) encodes; {@link #encodeAlone} may run
 * on any thread.
 */
final class SnapshotEncoder {

    private static final int WORKERS_FIELD = dev.rollcall.protocol.v1.FleetSnapshot.WORKERS_FIELD_NUMBER;
    private static final int EXCLUDED_FIELD = dev.rollcall.protocol.v1.FleetSnapshot.EXCLUDED_FIELD_NUMBER;
    private static final int BASE_NUMBER_FIELD = dev.rollcall.protocol.v1.FleetSnapshot.BASE_NUMBER_FIELD_NUMBER;
    private static final int REMOVED_URLS_FIELD = dev.rollcall.protocol.v1.FleetSnapshot.REMOVED_URLS_FIELD_NUMBER;
    // Bounds as the resolver's own checks of a worker's answer; text can only shrink or be escaped here.
    private static final int MAX_VERSION_CHARS = dev.rollcall.api.WorkerEndpoint.MAX_VERSION_CHARS;
    private static final int MAX_INSTANCE_ID_CHARS = 128;
    private static final int MAX_LABEL_KEY_CHARS = 317;
    private static final int MAX_LABEL_VALUE_CHARS = 1024;
    private static final int MAX_REASON_CHARS = 1024;

    private final String instanceId;
    /** The last snapshot's entries, by status object: what the next one may reuse. */
    private IdentityHashMap<WorkerStatus, byte[]> entries = new IdentityHashMap<>();
    /** The last snapshot's LACKS_REQUIREMENT entries, by what they encode: what a narrowed snapshot may reuse. */
    private HashMap<Lacking, byte[]> lacking = new HashMap<>();
    /** The last snapshot's entries by (raw) URL: what its change message is computed against. */
    private HashMap<String, Listed> listed = new HashMap<>();
    /** The last snapshot's number; -1 before the first. */
    private long lastNumber = -1;
    /** Worker entries encoded so far by {@link #encode}: what a publish cost beyond copying. */
    private long entriesEncoded;

    SnapshotEncoder(String instanceId) {
        this.instanceId = instanceId;
    }

    /**
     * {@code snapshot}'s encoding, reusing the entries of statuses the last call saw, with its change
     * message against the last call's snapshot (none on the first call).
     */
    EncodedSnapshot encode(FleetSnapshot snapshot) {
        List<WorkerStatus> statuses = snapshot.statuses();
        IdentityHashMap<WorkerStatus, byte[]> next = new IdentityHashMap<>(entries.size() + 16);
        HashMap<String, Listed> nextListed = new HashMap<>(listed.size() * 4 / 3 + 16);
        HashMap<Lacking, byte[]> nextLacking = new HashMap<>(lacking.size() * 4 / 3 + 16);
        byte[][] parts = new byte[statuses.size()][];
        List<byte[]> changed = new ArrayList<>();
        int changedSize = 0;
        for (int i = 0; i < parts.length; i++) {
            WorkerStatus status = statuses.get(i);
            byte[] entry = entries.get(status);
            if (entry == null && status.state() == WorkerStatus.State.LACKS_REQUIREMENT) {
                // Narrowing makes these afresh each time: the same worker lacking the same thing is
                // the same status by value, and must neither be encoded again nor count as changed.
                entry = lacking.get(new Lacking(status));
            }
            boolean reused = entry != null;
            if (!reused) {
                entry = entry(status);
                entriesEncoded++;
            }
            next.put(status, entry);
            if (status.state() == WorkerStatus.State.LACKS_REQUIREMENT) {
                nextLacking.put(new Lacking(status), entry);
            }
            parts[i] = entry;
            String url = status.endpoint().url();
            Listed was = listed.get(url);
            if (was != null && was.entry() == entry) {
                nextListed.put(url, was);
            } else {
                nextListed.put(url, new Listed(was != null ? was.escapedUrl()
                        : PeerText.escape(url, MAX_REASON_CHARS), entry));
            }
            // A new status object may still encode as before (a publish for another worker's sake).
            if (!reused && (was == null || !Arrays.equals(was.entry(), entry))) {
                changed.add(entry);
                changedSize += entry.length;
            }
        }
        byte[] head = head(snapshot).toByteArray();
        byte[] whole = concat(head, parts, sizeOf(parts));
        byte[] changes = null;
        long base = lastNumber;
        // base_number 0 means "whole": the resolver's first snapshot (number 0) is no base.
        if (base >= 1) {
            List<String> removed = new ArrayList<>();
            // The last state is only read until the end, so that a publish that fails leaves it whole.
            listed.forEach((url, gone) -> {
                if (!nextListed.containsKey(url)) {
                    removed.add(gone.escapedUrl());
                }
            });
            removed.sort(null);
            byte[] headAndRemoved = concat(head, new byte[][] {changeFields(base, removed)}, -1);
            changes = concat(headAndRemoved, changed.toArray(new byte[0][]), changedSize);
        }
        entries = next;
        lacking = nextLacking;
        listed = nextListed;
        lastNumber = snapshot.number();
        return new EncodedSnapshot(snapshot.number(), whole, Math.max(base, 0), changes);
    }

    /** How many worker entries {@link #encode} has encoded (rather than reused); the encoding thread only. */
    long entriesEncoded() {
        return entriesEncoded;
    }

    /** {@code snapshot}'s encoding, whole, without the cache: for a snapshot the listener has not seen yet. */
    EncodedSnapshot encodeAlone(FleetSnapshot snapshot) {
        List<WorkerStatus> statuses = snapshot.statuses();
        byte[][] parts = new byte[statuses.size()][];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = entry(statuses.get(i));
        }
        return new EncodedSnapshot(snapshot.number(), concat(head(snapshot).toByteArray(), parts, sizeOf(parts)));
    }

    /**
     * What a LACKS_REQUIREMENT entry encodes: the endpoint and the worker's answer (the same objects
     * the published status holds, compared by identity: no deep hashing per publish) and the reason.
     */
    private static final class Lacking {
        private final WorkerEndpoint endpoint;
        private final WorkerInfo info;
        private final String reason;

        Lacking(WorkerStatus status) {
            this.endpoint = status.endpoint();
            this.info = status.info().orElse(null);
            this.reason = status.reason();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Lacking other && endpoint == other.endpoint && info == other.info
                    && reason.equals(other.reason);
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(endpoint) * 31 + reason.hashCode();
        }
    }

    /** One URL's entry in the last snapshot, and the URL as a client sees it. */
    private record Listed(String escapedUrl, byte[] entry) {
    }

    private static int sizeOf(byte[][] parts) {
        int size = 0;
        for (byte[] part : parts) {
            size += part.length;
        }
        return size;
    }

    /** {@code head} followed by {@code parts} ({@code size}: their total length, or -1 to count it). */
    private static byte[] concat(byte[] head, byte[][] parts, int size) {
        byte[] out = new byte[head.length + (size < 0 ? sizeOf(parts) : size)];
        System.arraycopy(head, 0, out, 0, head.length);
        int at = head.length;
        // Protobuf reads a repeated field's entries in the order they come, wherever the other fields
        // are: the statuses are ordered by URL, so both lists stay ordered by URL.
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }

    /** {@code base_number} and {@code removed_urls}, as fields to append to a snapshot's head. */
    private static byte[] changeFields(long base, List<String> removed) {
        int size = CodedOutputStream.computeUInt64Size(BASE_NUMBER_FIELD, base);
        for (String url : removed) {
            size += CodedOutputStream.computeStringSize(REMOVED_URLS_FIELD, url);
        }
        byte[] out = new byte[size];
        CodedOutputStream o = CodedOutputStream.newInstance(out);
        try {
            o.writeUInt64(BASE_NUMBER_FIELD, base);
            for (String url : removed) {
                o.writeString(REMOVED_URLS_FIELD, url);
            }
            o.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the array was sized for it
        }
        return out;
    }

    /** Everything but the workers. */
    private dev.rollcall.protocol.v1.FleetSnapshot head(FleetSnapshot snapshot) {
        SelectionReport selection = snapshot.selection();
        Selection.Builder s = Selection.newBuilder()
                .setPolicy(PeerText.escape(selection.policy(), MAX_REASON_CHARS))
                .setCohort(PeerText.escape(selection.cohort().orElse(""), MAX_VERSION_CHARS))
                .setExplanation(PeerText.escape(selection.explanation(), MAX_REASON_CHARS))
                .setSelector(PeerText.escape(selection.selector(), MAX_REASON_CHARS))
                .setPreference(PeerText.escape(selection.preference(), MAX_REASON_CHARS));
        Map<String, Integer> cohorts = new TreeMap<>();
        selection.cohorts().forEach((version, n) -> cohorts.merge(PeerText.escape(version, MAX_VERSION_CHARS), n,
                Integer::sum));
        cohorts.forEach(s::putCohorts);
        FleetCounts c = snapshot.counts();
        return dev.rollcall.protocol.v1.FleetSnapshot.newBuilder()
                .setNumber(snapshot.number())
                .setServiceInstanceId(instanceId)
                .setPublishedAtUnixMillis(snapshot.publishedAt().toEpochMilli())
                .setSelection(s)
                .setStaleSinceUnixMillis(snapshot.staleSince().map(java.time.Instant::toEpochMilli).orElse(0L))
                .setDiscoveryProblem(PeerText.escape(snapshot.discoveryProblem().orElse(""), MAX_REASON_CHARS))
                .setCounts(dev.rollcall.protocol.v1.FleetCounts.newBuilder()
                        .setCandidates(c.candidates()).setCompatible(c.compatible()).setRejected(c.rejected())
                        .setUnreachable(c.unreachable()).setPending(c.pending()).setDraining(c.draining())
                        .setNotServing(c.notServing()).setOutsideSubset(c.outsideSubset())
                        .setLacksRequirement(c.lacksRequirement()))
                .build();
    }

    /** One worker as a whole field of FleetSnapshot: tag ({@code workers} or {@code excluded}), length, message. */
    private static byte[] entry(WorkerStatus status) {
        byte[] worker = worker(status).toByteArray();
        int field = status.state() == WorkerStatus.State.COMPATIBLE ? WORKERS_FIELD : EXCLUDED_FIELD;
        byte[] out = new byte[CodedOutputStream.computeTagSize(field)
                + CodedOutputStream.computeUInt32SizeNoTag(worker.length) + worker.length];
        CodedOutputStream o = CodedOutputStream.newInstance(out);
        try {
            o.writeByteArray(field, worker);
            o.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the array was sized for it
        }
        return out;
    }

    static FleetWorker worker(WorkerStatus status) {
        FleetWorker.Builder w = FleetWorker.newBuilder()
                .setUrl(PeerText.escape(status.endpoint().url(), MAX_REASON_CHARS))
                .setState(state(status.state()))
                .setReason(PeerText.escape(status.reason(), MAX_REASON_CHARS));
        Map<String, String> labels = status.endpoint().labels();
        if (status.info().isPresent()) {
            WorkerInfo info = status.info().get();
            w.setVersion(PeerText.escape(info.version(), MAX_VERSION_CHARS))
                    .setInstanceId(PeerText.escape(info.instanceId(), MAX_INSTANCE_ID_CHARS));
            labels = merged(labels, info.labels());
            for (Capability c : info.capabilities().asList()) {
                w.addCapabilities(dev.rollcall.protocol.v1.Capability.newBuilder()
                        .setName(PeerText.escape(c.name(), Capability.MAX_NAME_CHARS))
                        .setVersion(PeerText.escape(c.version(), Capability.MAX_VERSION_CHARS)));
            }
        }
        for (Map.Entry<String, String> label : labels.entrySet()) {
            w.putLabels(PeerText.escape(label.getKey(), MAX_LABEL_KEY_CHARS),
                    PeerText.escape(label.getValue(), MAX_LABEL_VALUE_CHARS));
        }
        String zone = WorkerZone.of(labels);
        w.setZone(PeerText.escape(zone, MAX_LABEL_VALUE_CHARS));
        status.holders().ifPresent(w::setHolders);
        return w.build();
    }

    /** Discovery's labels overridden by the worker's own, as the resolver's policy sees them. */
    private static Map<String, String> merged(Map<String, String> fromDiscovery, Map<String, String> fromWorker) {
        if (fromDiscovery.isEmpty()) {
            return fromWorker;
        }
        if (fromWorker.isEmpty()) {
            return fromDiscovery;
        }
        Map<String, String> merged = new TreeMap<>(fromDiscovery);
        merged.putAll(fromWorker);
        return merged;
    }

    private static FleetWorkerState state(WorkerStatus.State state) {
        return switch (state) {
            case COMPATIBLE -> FleetWorkerState.FLEET_WORKER_STATE_COMPATIBLE;
            case PENDING -> FleetWorkerState.FLEET_WORKER_STATE_PENDING;
            case REJECTED -> FleetWorkerState.FLEET_WORKER_STATE_REJECTED;
            case UNREACHABLE -> FleetWorkerState.FLEET_WORKER_STATE_UNREACHABLE;
            case DRAINING -> FleetWorkerState.FLEET_WORKER_STATE_DRAINING;
            case NOT_SERVING -> FleetWorkerState.FLEET_WORKER_STATE_NOT_SERVING;
            case OUTSIDE_SUBSET -> FleetWorkerState.FLEET_WORKER_STATE_OUTSIDE_SUBSET;
            case LACKS_REQUIREMENT -> FleetWorkerState.FLEET_WORKER_STATE_LACKS_REQUIREMENT;
        };
    }
}
