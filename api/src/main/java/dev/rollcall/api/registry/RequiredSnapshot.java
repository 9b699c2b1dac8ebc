package dev.rollcall.api.registry;

import dev.rollcall.api.Requirements;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A snapshot narrowed to one query's requirements ({@link FleetSnapshot#requiring}), as a view of
 * the snapshot it narrows: making one finds the workers that meet the requirements in the base's
 * capability index (about what the answer costs); every other answer is derived from the base when
 * first asked for (racy but idempotent, as the base's own). It answers exactly as a snapshot built
 * from the base's statuses with every compatible worker that lacks a requirement turned
 * {@link WorkerStatus.State#LACKS_REQUIREMENT} would.
 *
 * <p>Immutable and thread-safe; no method blocks.
 */
final class RequiredSnapshot implements FleetSnapshot, ServiceViews {

    private final ImmutableFleetSnapshot base;
    private final Requirements requirements;
    private final int[] met; // positions into the base's compatible workers, ascending; never written
    private final List<WorkerInfo> workers;
    private final List<WorkerEndpoint> endpoints;
    private final FleetCounts counts;
    private volatile List<WorkerStatus> statuses;
    private volatile SelectionReport selection;
    private volatile ServiceIndex services;
    private volatile SchemaIndex schemas;
    private volatile SchemaView schemaView;
    private volatile SortedSet<String> capabilities;

    /** {@code base} narrowed to {@code requirements} (not empty; the base's own included). */
    RequiredSnapshot(ImmutableFleetSnapshot base, Requirements requirements) {
        this.base = base;
        this.requirements = requirements;
        this.met = base.capabilityIndex().positionsMeeting(requirements);
        FleetTally tally = base.tally();
        WorkerInfo[] w = new WorkerInfo[met.length];
        WorkerEndpoint[] e = new WorkerEndpoint[met.length];
        for (int i = 0; i < met.length; i++) {
            w[i] = tally.workers[met[i]];
            e[i] = tally.endpoints[met[i]];
        }
        this.workers = readOnly(w);
        this.endpoints = readOnly(e);
        FleetCounts c = base.counts();
        this.counts = new FleetCounts(c.candidates(), met.length, c.rejected(), c.unreachable(), c.pending(),
                c.draining(), c.notServing(), c.overKeptCap(), c.outsideSubset(),
                c.lacksRequirement() + c.compatible() - met.length);
    }

    private static <T> List<T> readOnly(T[] owned) {
        return owned.length == 0 ? List.of() : Collections.unmodifiableList(Arrays.asList(owned));
    }

    /** The snapshot this one narrows. */
    ImmutableFleetSnapshot base() {
        return base;
    }

    /** {@code s} as this snapshot has it: a compatible worker that lacks a requirement is not compatible here. */
    private WorkerStatus narrowed(WorkerStatus s) {
        if (s.state() != WorkerStatus.State.COMPATIBLE) {
            return s;
        }
        Optional<String> why = requirements.whyNotMetBy(s.info().orElseThrow().capabilities());
        return why.isEmpty() ? s : lacking(s, why.get());
    }

    private static WorkerStatus lacking(WorkerStatus s, String why) {
        return new WorkerStatus(s.endpoint(), WorkerStatus.State.LACKS_REQUIREMENT, why, s.info());
    }

    @Override
    public long number() {
        return base.number();
    }

    @Override
    public Instant publishedAt() {
        return base.publishedAt();
    }

    @Override
    public Optional<Instant> staleSince() {
        return base.staleSince();
    }

    @Override
    public Optional<String> discoveryProblem() {
        return base.discoveryProblem();
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
        return base.policy();
    }

    @Override
    public Requirements requirements() {
        return requirements;
    }

    @Override
    public List<WorkerEndpoint> compatibleEndpoints() {
        return endpoints;
    }

    @Override
    public Optional<WorkerStatus> status(String endpointId) {
        return base.status(endpointId).map(this::narrowed);
    }

    @Override
    public List<WorkerStatus> statuses() {
        List<WorkerStatus> all = statuses;
        if (all == null) {
            WorkerStatus[] in = base.inUrlOrder();
            WorkerStatus[] out = new WorkerStatus[in.length];
            int compatible = 0; // the base's compatible workers passed so far
            int next = 0;       // the next of met
            for (int i = 0; i < in.length; i++) {
                WorkerStatus s = in[i];
                if (s.state() == WorkerStatus.State.COMPATIBLE) {
                    if (next < met.length && met[next] == compatible) {
                        next++;
                    } else {
                        s = lacking(s, requirements.whyNotMetBy(s.info().orElseThrow().capabilities()).orElseThrow());
                    }
                    compatible++;
                }
                out[i] = s;
            }
            all = readOnly(out);
            statuses = all;
        }
        return all;
    }

    @Override
    public SelectionReport selection() {
        SelectionReport report = selection;
        if (report == null) {
            List<WorkerStatus> excluded = new ArrayList<>(counts.candidates() - counts.compatible());
            for (WorkerStatus s : statuses()) {
                if (s.state() != WorkerStatus.State.COMPATIBLE) {
                    excluded.add(s);
                }
            }
            report = base.selectionExcluding(excluded);
            selection = report;
        }
        return report;
    }

    @Override
    public Optional<String> version(String endpointId) {
        return base.version(endpointId); // a worker's version is the same, compatible here or not
    }

    @Override
    public SortedMap<String, Integer> versionHistogram() {
        // The histogram counts every worker that answered and passed the policy's judgement, met or not.
        return base.versionHistogram();
    }

    @Override
    public ServiceIndex serviceIndex() {
        ServiceIndex index = services;
        if (index == null) {
            index = new ServiceIndex(statuses());
            services = index;
        }
        return index;
    }

    @Override
    public WorkerInfo route(String service, String method, Caller caller, String key) {
        return base.schemas().route(this, service, method, caller, key);
    }

    private SchemaIndex schemas() {
        SchemaIndex index = schemas;
        if (index == null) {
            Set<String> versions = new HashSet<>();
            for (WorkerInfo w : workers) {
                versions.add(w.version());
            }
            index = base.schemasWith(versions);
            schemas = index;
        }
        return index;
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
            view = new SchemaView(this::schemas,
                    worker -> Optional.ofNullable(base.byUrl(worker.url())).map(this::narrowed));
            schemaView = view;
        }
        return view;
    }

    @Override
    public SortedSet<String> capabilities() {
        SortedSet<String> names = capabilities;
        if (names == null) {
            TreeSet<String> all = new TreeSet<>();
            for (WorkerInfo w : workers) {
                w.capabilities().asList().forEach(c -> all.add(c.name()));
            }
            names = Collections.unmodifiableSortedSet(all);
            capabilities = names;
        }
        return names;
    }

    @Override
    public List<WorkerInfo> workersWith(Requirements more) {
        if (more.isEmpty()) {
            return workers;
        }
        Requirements all;
        try {
            all = requirements.and(more);
        } catch (IllegalArgumentException tooMany) {
            // More requirements together than one query may give: still an answer, by a filter.
            return workers.stream().filter(more::isMetBy).toList();
        }
        return base.capabilityIndex().workersWith(all);
    }

    @Override
    public FleetSnapshot requiring(Requirements more) {
        return more.isEmpty() ? this : base.requiring(requirements.and(more));
    }

    @Override
    public String toString() {
        return "snapshot " + number() + " requiring " + requirements + " (" + counts
                + base.staleSince().map(s -> ", stale since " + s).orElse("") + ")";
    }
}
