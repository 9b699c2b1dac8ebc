package dev.rollcall.api.registry;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * An immutable {@link FleetSnapshot}: every answer is computed once, most when it is built; the
 * lookups by instance id and by service, the selection report, the schema and capability indexes on
 * first use (racy but idempotent: two readers may both compute one, and both get equal answers).
 * {@link #requiring} hands out {@link RequiredSnapshot} views over it, not copies.
 */
final class ImmutableFleetSnapshot implements FleetSnapshot, ServiceViews {

    /**
     * How many narrowed views a snapshot keeps: enough for the few requirement sets a coordinator's
     * queries repeat, and a bound for a requester that names a new set each time.
     */
    static final int KEPT_VIEWS = 8;

    private final long number;
    private final Instant publishedAt;
    private final Instant staleSince;
    private final String discoveryProblem;
    private final String policy;
    private final WorkerStatus[] statusArray; // in URL order; never handed out (statuses wraps it)
    private final List<WorkerStatus> statuses;
    private final List<WorkerInfo> workers;
    private final List<WorkerEndpoint> endpoints;
    // Built on first use (racy but idempotent, published through the volatile): the resolver makes
    // many snapshots while converging that no one asks about one endpoint or service, and these
    // indexes would cost as much as the rest of making one.
    private volatile Map<String, WorkerStatus> byId;
    private final SortedMap<String, Integer> histogram;
    private final FleetCounts counts;
    private volatile ServiceIndex services;
    // The selection report (its list of every candidate left out) and the schema index are built on
    // first use too: while converging a resolver builds many snapshots in quick succession, and
    // most are never asked about either. What they are made of is kept.
    private volatile SelectionReport selection;
    private final Optional<String> cohort;
    private final String explanation;
    private final String selector;
    private final String preference;
    private volatile SchemaIndex schemas;
    private volatile SchemaView schemaView;
    private volatile CapabilityIndex capabilityIndex;
    /** The narrowed views handed out lately, newest first, at most {@link #KEPT_VIEWS}. */
    private volatile RequiredSnapshot[] views; // null until the first
    private final FleetTally tally;
    private final Map<String, ProtoSchema> schemasByVersion;
    private final KeyPaths keys;
    private final Requirements requirements;

    ImmutableFleetSnapshot(long number, Instant publishedAt, Instant staleSince, String policy,
                           WorkerStatus[] owned, Optional<String> cohort, String explanation,
                           Map<String, ProtoSchema> schemasByVersion, KeyPaths keys, String selector,
                           String preference, String discoveryProblem, int overKeptCap, Requirements requirements,
                           FleetSnapshot previous) {
        this.discoveryProblem = discoveryProblem;
        this.number = number;
        this.publishedAt = Objects.requireNonNull(publishedAt, "publishedAt");
        this.staleSince = staleSince;
        this.policy = Objects.requireNonNull(policy, "policy");
        WorkerStatus[] sorted = owned; // the caller's copy, handed over
        // From the previous snapshot when there is one: only the statuses that are not its own are
        // read (the resolver hands its unchanged workers' status objects over again).
        FleetTally tally = previous instanceof ImmutableFleetSnapshot p
                ? FleetTally.update(p.tally, p.statusArray, sorted) : null;
        if (tally == null) {
            if (!inUrlOrder(sorted)) { // the resolver hands them over in URL order already
                Arrays.sort(sorted, Comparator.comparing(st -> st.endpoint().url()));
            }
            tally = FleetTally.count(sorted);
        }
        assert tally.sameAs(FleetTally.count(sorted)) : "a tally from the previous snapshot differs from a count";
        this.tally = tally;
        this.statusArray = sorted;
        this.statuses = readOnly(sorted);
        this.workers = readOnly(tally.workers, tally.compatible);
        this.endpoints = readOnly(tally.endpoints, tally.compatible);
        this.histogram = tally.histogram();
        this.counts = tally.counts(overKeptCap);
        this.cohort = Objects.requireNonNull(cohort, "cohort");
        this.explanation = Objects.requireNonNull(explanation, "explanation");
        this.selector = Objects.requireNonNull(selector, "selector");
        this.preference = Objects.requireNonNull(preference, "preference");
        this.schemasByVersion = Objects.requireNonNull(schemasByVersion, "schemasByVersion");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.requirements = Objects.requireNonNull(requirements, "requirements");
    }

    /** The statuses in URL order: the array itself, for readers in this package that never write it. */
    WorkerStatus[] inUrlOrder() {
        return statusArray;
    }

    /** What {@link RequiredSnapshot} reads of the snapshot it narrows: its tally. */
    FleetTally tally() {
        return tally;
    }

    /** This snapshot's selection report with other candidates left out: a narrowed view's. */
    SelectionReport selectionExcluding(List<WorkerStatus> excluded) {
        return new SelectionReport(policy, cohort, explanation, histogram, excluded, selector, preference);
    }

    /** This snapshot's schemas with other compatible versions: a narrowed view's. */
    SchemaIndex schemasWith(java.util.Set<String> compatibleVersions) {
        return new SchemaIndex(histogram.keySet(), compatibleVersions, schemasByVersion, keys);
    }

    /** {@code snapshot}'s chosen cohort, as its selection report says, without building the report for one of these. */
    static Optional<String> cohortOf(FleetSnapshot snapshot) {
        if (snapshot instanceof RequiredSnapshot view) {
            return view.base().cohort;
        }
        return snapshot instanceof ImmutableFleetSnapshot s ? s.cohort : snapshot.selection().cohort();
    }

    /** Whether {@code statuses} are in strict URL order. */
    private static boolean inUrlOrder(WorkerStatus[] statuses) {
        for (int i = 1; i < statuses.length; i++) {
            if (statuses[i - 1].endpoint().url().compareTo(statuses[i].endpoint().url()) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** A read-only list over an array no one else holds (no copy, unlike List.of). */
    private static <T> List<T> readOnly(T[] owned) {
        return readOnly(owned, owned.length);
    }

    /** A read-only list over the first {@code length} elements of an array no one else holds. */
    private static <T> List<T> readOnly(T[] owned, int length) {
        if (length == 0) {
            return List.of();
        }
        List<T> all = Arrays.asList(owned);
        return Collections.unmodifiableList(length == owned.length ? all : all.subList(0, length));
    }

    /**
     * The status of the worker with this URL: a binary search of the statuses, which are in URL
     * order (no index to build: building one is a pass over the whole fleet, on the first lookup of
     * every snapshot).
     */
    WorkerStatus byUrl(String url) {
        int low = 0;
        int high = statuses.size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            WorkerStatus s = statuses.get(mid);
            int c = s.endpoint().url().compareTo(url);
            if (c < 0) {
                low = mid + 1;
            } else if (c > 0) {
                high = mid - 1;
            } else {
                return s;
            }
        }
        return null;
    }

    /** By instance id (the first in URL order when two workers report the same one); built on first use. */
    private Map<String, WorkerStatus> byId() {
        Map<String, WorkerStatus> ids = byId;
        if (ids == null) {
            Map<String, WorkerStatus> m = new HashMap<>(statuses.size() * 2);
            for (WorkerStatus s : statuses) {
                s.info().map(WorkerInfo::instanceId).filter(id -> !id.isEmpty()).ifPresent(id -> m.putIfAbsent(id, s));
            }
            ids = Collections.unmodifiableMap(m);
            byId = ids;
        }
        return ids;
    }

    @Override
    public ServiceIndex serviceIndex() {
        ServiceIndex index = services;
        if (index == null) {
            index = new ServiceIndex(statuses);
            services = index;
        }
        return index;
    }

    @Override
    public long number() {
        return number;
    }

    @Override
    public Instant publishedAt() {
        return publishedAt;
    }

    @Override
    public Optional<Instant> staleSince() {
        return Optional.ofNullable(staleSince);
    }

    @Override
    public Optional<String> discoveryProblem() {
        return Optional.ofNullable(discoveryProblem);
    }

    @Override
    public List<WorkerInfo> workers() {
        return workers;
    }

    @Override
    public FleetCounts counts() {
        return counts;
    }

    @Override
    public String policy() {
        return policy;
    }

    @Override
    public SelectionReport selection() {
        SelectionReport report = selection;
        if (report == null) {
            List<WorkerStatus> excluded = new ArrayList<>(statusArray.length - counts.compatible());
            for (WorkerStatus s : statusArray) {
                if (s.state() != WorkerStatus.State.COMPATIBLE) {
                    excluded.add(s);
                }
            }
            report = new SelectionReport(policy, cohort, explanation, histogram, excluded, selector, preference);
            selection = report;
        }
        return report;
    }

    SchemaIndex schemas() {
        SchemaIndex index = schemas;
        if (index == null) {
            index = new SchemaIndex(histogram.keySet(), tally.compatibleVersions(), schemasByVersion, keys);
            schemas = index;
        }
        return index;
    }

    @Override
    public List<WorkerEndpoint> compatibleEndpoints() {
        return endpoints;
    }

    @Override
    public Optional<WorkerStatus> status(String endpointId) {
        WorkerStatus s = byUrl(endpointId);
        if (s != null) {
            return Optional.of(s);
        }
        if (endpointId.contains("://")) {
            // A URL (any spelling) is looked up as one, never among the instance ids: a URL that is
            // not in the snapshot (a worker just added, one that left) must not build the id index,
            // a pass over the whole fleet on every snapshot such a caller looks at.
            try {
                return Optional.ofNullable(byUrl(WorkerEndpoint.parse(endpointId).url()));
            } catch (IllegalArgumentException notAnEndpoint) {
                // not a URL after all: an instance id with "://" in it
            }
        }
        return Optional.ofNullable(byId().get(endpointId));
    }

    @Override
    public List<WorkerStatus> statuses() {
        return statuses;
    }

    @Override
    public Optional<String> version(String endpointId) {
        return status(endpointId).flatMap(WorkerStatus::info).map(WorkerInfo::version);
    }

    @Override
    public SortedMap<String, Integer> versionHistogram() {
        return histogram;
    }

    @Override
    public ProtoSymbols symbols() {
        return schemaView();
    }

    @Override
    public KeyExtractors keyExtractors() {
        return schemaView();
    }

    private SchemaView schemaView() {
        SchemaView view = schemaView;
        if (view == null) {
            view = new SchemaView(this::schemas, worker -> Optional.ofNullable(byUrl(worker.url())));
            schemaView = view;
        }
        return view;
    }

    @Override
    public Requirements requirements() {
        return requirements;
    }

    /** The capabilities of the compatible workers, indexed on first use (racy but idempotent). */
    CapabilityIndex capabilityIndex() {
        CapabilityIndex index = capabilityIndex;
        if (index == null) {
            index = new CapabilityIndex(tally.workers, tally.compatible);
            capabilityIndex = index;
        }
        return index;
    }

    @Override
    public SortedSet<String> capabilities() {
        return capabilityIndex().names();
    }

    @Override
    public List<WorkerInfo> workersWith(Requirements required) {
        // Not and-ed with this snapshot's own requirements: a built snapshot's statuses are taken as given.
        return required.isEmpty() ? workers : capabilityIndex().workersWith(required);
    }

    /**
     * A view, not a copy: it costs what its workers cost, and answers the rest from this snapshot
     * when asked. The last few views are kept, since queries repeat their requirements.
     */
    @Override
    public FleetSnapshot requiring(Requirements more) {
        if (more.isEmpty()) {
            return this;
        }
        Requirements all = requirements.and(more);
        RequiredSnapshot[] kept = views == null ? new RequiredSnapshot[0] : views;
        for (RequiredSnapshot v : kept) {
            if (v.requirements().equals(all)) {
                return v;
            }
        }
        RequiredSnapshot view = new RequiredSnapshot(this, all);
        // Racy: a view two readers make at once may be kept once or twice, or lost; all are equal.
        RequiredSnapshot[] next = Arrays.copyOf(kept, Math.min(kept.length + 1, KEPT_VIEWS));
        System.arraycopy(kept, 0, next, 1, next.length - 1);
        next[0] = view;
        views = next;
        return view;
    }

    @Override
    public WorkerInfo route(String service, String method, Caller caller, String key) {
        return schemas().route(this, service, method, caller, key);
    }

    @Override
    public String toString() {
        return "snapshot " + number + (requirements.isEmpty() ? "" : " requiring " + requirements) + " (" + counts
                + (staleSince == null ? "" : ", stale since " + staleSince) + ")";
    }
}
