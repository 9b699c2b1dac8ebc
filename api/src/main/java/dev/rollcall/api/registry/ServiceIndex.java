package dev.rollcall.api.registry;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The services and invocation targets of one snapshot, computed once from its statuses so that
 * every lookup is a map read. Immutable.
 */
final class ServiceIndex {

    private record Key(String service, String handler) {
    }

    private record Offer(WorkerInfo worker, Visibility visibility) {
    }

    /** What one target looks like to each caller, or why a caller cannot use it. */
    private record Entry(InvocationTarget listed, InvocationTarget forIngress, InvocationTarget forInternal,
                         List<WorkerStatus> incompatible) {
    }

    private final SortedSet<String> services;
    private final Map<String, List<WorkerInfo>> offering;
    private final Map<String, List<WorkerEndpoint>> latest;
    private final Map<Key, Entry> targets;
    private final List<InvocationTarget> listed;

    ServiceIndex(List<WorkerStatus> sortedStatuses) {
        Map<String, List<WorkerInfo>> byService = new TreeMap<>();
        Map<Key, List<Offer>> compatibleOffers = new TreeMap<>(
                Comparator.comparing(Key::service).thenComparing(Key::handler));
        Map<Key, List<WorkerStatus>> otherOffers = new HashMap<>();
        for (WorkerStatus status : sortedStatuses) {
            if (status.info().isEmpty()) {
                continue;
            }
            WorkerInfo info = status.info().get();
            boolean compatible = status.state() == WorkerStatus.State.COMPATIBLE;
            for (ServiceInfo service : info.services()) {
                if (compatible) {
                    List<WorkerInfo> list = byService.computeIfAbsent(service.name(), s -> new ArrayList<>());
                    if (list.isEmpty() || list.get(list.size() - 1) != info) {
                        list.add(info);
                    }
                }
                for (HandlerInfo handler : service.handlers()) {
                    Key key = new Key(service.name(), handler.name());
                    if (compatible) {
                        compatibleOffers.computeIfAbsent(key, k -> new ArrayList<>())
                                .add(new Offer(info, service.effectiveVisibility(handler)));
                    } else {
                        otherOffers.computeIfAbsent(key, k -> new ArrayList<>()).add(status);
                    }
                }
            }
        }
        Map<String, List<WorkerInfo>> offer = new HashMap<>();
        Map<String, List<WorkerEndpoint>> newest = new HashMap<>();
        byService.forEach((service, workers) -> {
            offer.put(service, List.copyOf(workers));
            String top = workers.stream().map(WorkerInfo::version).max(VersionOrder.INSTANCE).orElseThrow();
            newest.put(service, workers.stream().filter(w -> w.version().equals(top))
                    .map(WorkerInfo::endpoint).toList());
        });
        this.services = Collections.unmodifiableSortedSet(new TreeSet<>(byService.keySet()));
        this.offering = Map.copyOf(offer);
        this.latest = Map.copyOf(newest);

        Map<Key, Entry> entries = new HashMap<>();
        List<InvocationTarget> all = new ArrayList<>();
        compatibleOffers.forEach((key, offers) -> {
            InvocationTarget listedTarget = target(key, offers);
            all.add(listedTarget);
            entries.put(key, new Entry(listedTarget, target(key, permitted(offers, Caller.INGRESS)),
                    target(key, permitted(offers, Caller.INTERNAL)), List.of()));
        });
        otherOffers.forEach((key, statuses) -> entries.putIfAbsent(key,
                new Entry(null, null, null, List.copyOf(statuses))));
        this.targets = Map.copyOf(entries);
        this.listed = List.copyOf(all);
    }

    SortedSet<String> services() {
        return services;
    }

    List<WorkerInfo> workersOffering(String service) {
        return offering.getOrDefault(service, List.of());
    }

    List<WorkerEndpoint> latestEndpoints(String service) {
        return latest.getOrDefault(service, List.of());
    }

    List<InvocationTarget> targets() {
        return listed;
    }

    InvocationTarget target(String service, String handler, Caller caller) {
        Entry entry = targets.get(new Key(service, handler));
        if (entry != null && entry.listed() != null) {
            InvocationTarget found = caller == Caller.INGRESS ? entry.forIngress() : entry.forInternal();
            if (found != null) {
                return found; // the hot path: no message to build
            }
        }
        String what = "service '" + service + "' handler '" + handler + "'";
        if (entry == null) {
            throw new TargetLookupException(TargetLookupException.Reason.NOT_FOUND, service, handler, caller,
                    what + " not found: no worker offers it");
        }
        if (entry.listed() == null) {
            throw new TargetLookupException(TargetLookupException.Reason.NO_COMPATIBLE_WORKER, service, handler,
                    caller, what + " has no compatible worker: only " + describe(entry.incompatible())
                    + " offer it");
        }
        TargetLookupException.Reason forbidden = caller == Caller.INGRESS
                ? TargetLookupException.Reason.NOT_PUBLIC : TargetLookupException.Reason.NOT_INTERNAL;
        if (entry.listed().visibility() == Visibility.UNKNOWN) {
            throw new TargetLookupException(forbidden, service, handler, caller, what + " has a visibility this"
                    + " version of Rollcall does not know (sent by a newer worker): no caller may call it");
        }
        String visibility = entry.listed().visibility().name().toLowerCase(Locale.ROOT);
        if (caller == Caller.INGRESS) {
            throw new TargetLookupException(TargetLookupException.Reason.NOT_PUBLIC, service, handler, caller,
                    what + " is not public: it is " + visibility + ", callable only from other services");
        }
        throw new TargetLookupException(TargetLookupException.Reason.NOT_INTERNAL, service, handler, caller,
                what + " is not internal: it is " + visibility + ", callable only from the ingress");
    }

    private static List<Offer> permitted(List<Offer> offers, Caller caller) {
        return offers.stream().filter(o -> caller.mayCall(o.visibility())).toList();
    }

    /** The target as the newest version among {@code offers} declares it; null when there are none. */
    private static InvocationTarget target(Key key, List<Offer> offers) {
        if (offers.isEmpty()) {
            return null;
        }
        Offer newest = offers.stream()
                .max(Comparator.comparing((Offer o) -> o.worker().version(), VersionOrder.INSTANCE)).orElseThrow();
        return new InvocationTarget(key.service(), key.handler(), newest.visibility(),
                offers.stream().map(Offer::worker).toList());
    }

    /** "2 rejected workers (versions 2.0.0), 1 unreachable worker". */
    private static String describe(List<WorkerStatus> statuses) {
        Map<WorkerStatus.State, TreeSet<String>> versions = new TreeMap<>();
        Map<WorkerStatus.State, Integer> counts = new TreeMap<>();
        for (WorkerStatus s : statuses) {
            counts.merge(s.state(), 1, Integer::sum);
            s.info().ifPresent(i -> versions.computeIfAbsent(s.state(), st -> new TreeSet<>()).add(i.version()));
        }
        List<String> parts = new ArrayList<>();
        counts.forEach((state, n) -> parts.add(n + " " + state.name().toLowerCase(Locale.ROOT)
                + (n == 1 ? " worker" : " workers")
                + (state == WorkerStatus.State.REJECTED ? " (versions " + String.join(", ", versions.get(state)) + ")"
                        : "")));
        return String.join(", ", parts);
    }
}
