package dev.rollcall.console;

import dev.rollcall.api.Capability;
import dev.rollcall.api.Requirement;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetCounts;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.SelectionReport;
import dev.rollcall.api.registry.WorkerStatus;
import java.time.Instant;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The console's JSON form of one snapshot ({@code /api/fleet} and every Server-Sent Event), built
 * once per snapshot by whoever needs it first and cached by number. Its shape is documented in the
 * module's README; keys may be added, none removed or renamed. Thread-safe.
 */
final class FleetJson {

    /** Label keys that name a worker's zone, in the order they are looked for. */
    static final List<String> ZONE_LABELS = List.of("zone", "topology.kubernetes.io/zone", "rollcall.zone");

    /** A built document: the snapshot's number and its UTF-8 bytes. */
    record Built(long snapshot, byte[] json, long buildNanos) {
    }

    private record Narrowed(Requirements requirements, Built built) {
    }

    private final String resolverName;
    private final Supplier<String> discovery;
    private final Timeline timeline;
    private volatile Built cached;
    /** The last narrowed document built ({@code ?require=}): pages that ask the same of one snapshot share it. */
    private volatile Narrowed narrowed;
    /**
     * Each worker's JSON in the last published document, by its status object: a snapshot shares the
     * status objects that did not change with the one before, so an update that touches 1 % of
     * 10,000 workers writes 100 of them. The sender's own.
     */
    private Map<WorkerStatus, String> fragments = new IdentityHashMap<>();

    FleetJson(String resolverName, Supplier<String> discovery, Timeline timeline) {
        this.resolverName = resolverName;
        this.discovery = discovery;
        this.timeline = timeline;
    }

    /**
     * The document of {@code snapshot}: the one the sender published when it is of the same number
     * and not narrowed, else a new one, not kept (the sender has not recorded that snapshot in the
     * timeline yet, or it is one query's view of it: {@link FleetSnapshot#requiring}).
     */
    Built of(FleetSnapshot snapshot) {
        if (!snapshot.requirements().isEmpty()) {
            Narrowed n = narrowed;
            if (n != null && n.built().snapshot() == snapshot.number() && n.requirements().equals(snapshot.requirements())) {
                return n.built();
            }
            Built built = build(snapshot, false);
            narrowed = new Narrowed(snapshot.requirements(), built);
            return built;
        }
        Built c = cached;
        if (c != null && c.snapshot() == snapshot.number()) {
            return c;
        }
        return build(snapshot, false);
    }

    /** Builds the document of a snapshot the timeline has just recorded, and keeps it. Sender thread only. */
    Built publish(FleetSnapshot snapshot) {
        Built built = build(snapshot, true);
        cached = built;
        return built;
    }

    private Built build(FleetSnapshot snapshot, boolean reuse) {
        long start = System.nanoTime();
        byte[] json = write(snapshot, reuse);
        return new Built(snapshot.number(), json, System.nanoTime() - start);
    }

    private byte[] write(FleetSnapshot s, boolean reuse) {
        List<WorkerStatus> statuses = s.statuses();
        JsonWriter w = new JsonWriter(512 + statuses.size() * 160);
        w.beginObject();
        w.member("resolver", resolverName);
        w.member("snapshot", s.number());
        w.member("publishedAt", s.publishedAt().toString());
        w.member("policy", s.policy());
        w.name("requirements").beginArray();
        for (Requirement r : s.requirements().asList()) {
            w.value(r.toString());
        }
        w.endArray();
        SelectionReport selection = s.selection();
        w.name("selection").beginObject()
                .member("cohort", selection.cohort().orElse(null))
                .member("explanation", selection.explanation())
                .member("selector", selection.selector())
                .member("preference", selection.preference());
        w.name("cohorts").beginObject();
        selection.cohorts().forEach((version, n) -> w.name(version).value(n));
        w.endObject().endObject();
        w.name("discovery").beginObject()
                .member("description", discovery.get())
                .member("staleSince", s.staleSince().map(Instant::toString).orElse(null))
                .member("problem", s.discoveryProblem().orElse(null))
                .endObject();
        FleetCounts c = s.counts();
        w.name("counts").beginObject()
                .member("candidates", c.candidates()).member("compatible", c.compatible())
                .member("rejected", c.rejected()).member("unreachable", c.unreachable())
                .member("pending", c.pending()).member("draining", c.draining())
                .member("notServing", c.notServing())
                .member("lacksRequirement", c.lacksRequirement())
                .endObject();
        writeVersions(w, statuses);
        w.name("workers").beginArray();
        Map<WorkerStatus, String> before = reuse ? fragments : Map.of();
        Map<WorkerStatus, String> now = reuse ? new IdentityHashMap<>(statuses.size() * 2) : null;
        for (WorkerStatus status : statuses) {
            String fragment = before.get(status);
            if (fragment == null) {
                JsonWriter one = new JsonWriter(256);
                writeWorker(one, status);
                fragment = one.text();
            }
            if (now != null && status.state() != WorkerStatus.State.DRAINING) { // a drain's start may still change
                now.put(status, fragment);
            }
            w.raw(fragment);
        }
        if (reuse) {
            fragments = now;
        }
        w.endArray();
        w.name("timeline").beginArray();
        List<Timeline.Entry> entries = timeline.entries();
        for (int i = entries.size() - 1; i >= 0; i--) { // newest first
            Timeline.Entry e = entries.get(i);
            w.beginObject().member("snapshot", e.snapshot()).member("at", e.at().toString())
                    .member("counts", e.counts());
            w.name("changes").beginArray();
            e.changes().forEach(w::value);
            w.endArray().member("more", e.more()).endObject();
        }
        w.endArray();
        w.endObject();
        return w.utf8();
    }

    /** Version → how many candidates report it, and how many of those are compatible. */
    private static void writeVersions(JsonWriter w, List<WorkerStatus> statuses) {
        Map<String, int[]> versions = new TreeMap<>();
        for (WorkerStatus status : statuses) {
            if (status.info().isPresent()) {
                int[] n = versions.computeIfAbsent(status.info().get().version(), v -> new int[2]);
                n[0]++;
                if (status.state() == WorkerStatus.State.COMPATIBLE) {
                    n[1]++;
                }
            }
        }
        w.name("versions").beginArray();
        versions.forEach((version, n) -> w.beginObject().member("version", version).member("workers", n[0])
                .member("compatible", n[1]).endObject());
        w.endArray();
    }

    private void writeWorker(JsonWriter w, WorkerStatus status) {
        String url = status.endpoint().url();
        WorkerInfo info = status.info().orElse(null);
        Map<String, String> labels = status.endpoint().labels();
        if (info != null && !info.labels().isEmpty()) {
            labels = new TreeMap<>(labels);
            labels.putAll(info.labels()); // what the worker says of itself over what discovery said
        } else if (labels.size() > 1) {
            labels = new TreeMap<>(labels);
        }
        w.beginObject();
        w.member("endpoint", url);
        w.member("version", info == null ? null : info.version());
        w.member("instance", info == null || info.instanceId().isEmpty() ? null : info.instanceId());
        w.member("state", status.state().name().toLowerCase(Locale.ROOT));
        w.member("status", statusText(status.state()));
        w.member("reason", status.reason());
        w.member("zone", zone(labels));
        w.member("labels", labels);
        w.name("capabilities").beginArray();
        if (info != null) {
            for (Capability c : info.capabilities().asList()) {
                w.value(c.toString());
            }
        }
        w.endArray();
        Instant since = status.state() == WorkerStatus.State.DRAINING ? timeline.drainingSince(url) : null;
        w.member("drainingSince", since == null ? null : since.toString());
        if (status.holders().isPresent()) { // a draining worker's own count (exact drain); null for the others
            w.member("holders", status.holders().getAsInt());
        } else {
            w.member("holders", (String) null);
        }
        w.endObject();
    }

    private static String zone(Map<String, String> labels) {
        for (String key : ZONE_LABELS) {
            String zone = labels.get(key);
            if (zone != null) {
                return zone;
            }
        }
        return null;
    }

    /** The state as a person reads it: in use or why not, in a few words. */
    private static String statusText(WorkerStatus.State state) {
        return switch (state) {
            case COMPATIBLE -> "in use";
            case REJECTED -> "rejected by the policy";
            case UNREACHABLE -> "not answering";
            case PENDING -> "being probed";
            case DRAINING -> "draining";
            case NOT_SERVING -> "not ready";
            case OUTSIDE_SUBSET -> "used by other coordinators";
            case LACKS_REQUIREMENT -> "lacks what the query requires";
        };
    }
}
