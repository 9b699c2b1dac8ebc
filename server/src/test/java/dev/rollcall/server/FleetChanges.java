package dev.rollcall.server;

import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a WatchFleet client with {@code changes_only} does with each message, as fleet.proto's
 * {@code base_number} comment says: a whole one replaces its state, a change message is applied to
 * the snapshot it holds, and only when {@code base_number} is that snapshot's number.
 */
final class FleetChanges {

    private FleetChanges() {
    }

    /** {@code held} (null: nothing yet) with {@code message} applied; an AssertionError if it may not be. */
    static FleetSnapshot apply(FleetSnapshot held, FleetSnapshot message) {
        if (message.getBaseNumber() == 0) {
            if (message.getRemovedUrlsCount() != 0) {
                throw new AssertionError("a whole snapshot " + message.getNumber() + " lists removed URLs");
            }
            return message;
        }
        if (held == null || held.getNumber() != message.getBaseNumber()
                || !held.getServiceInstanceId().equals(message.getServiceInstanceId())) {
            throw new AssertionError("change message " + message.getNumber() + " is based on "
                    + message.getBaseNumber() + ", the client holds "
                    + (held == null ? "nothing" : Long.toString(held.getNumber())));
        }
        Map<String, FleetWorker> workers = byUrl(held.getWorkersList());
        Map<String, FleetWorker> excluded = byUrl(held.getExcludedList());
        for (FleetWorker w : message.getWorkersList()) {
            excluded.remove(w.getUrl());
            workers.put(w.getUrl(), w);
        }
        for (FleetWorker w : message.getExcludedList()) {
            workers.remove(w.getUrl());
            excluded.put(w.getUrl(), w);
        }
        for (String url : message.getRemovedUrlsList()) {
            workers.remove(url);
            excluded.remove(url);
        }
        return message.toBuilder().clearBaseNumber().clearRemovedUrls()
                .clearWorkers().addAllWorkers(workers.values())
                .clearExcluded().addAllExcluded(excluded.values()).build();
    }

    /** {@code snapshot} with both lists ordered by URL, so that two equal states compare equal. */
    static FleetSnapshot byUrl(FleetSnapshot snapshot) {
        Comparator<FleetWorker> url = Comparator.comparing(FleetWorker::getUrl);
        return snapshot.toBuilder()
                .clearWorkers().addAllWorkers(snapshot.getWorkersList().stream().sorted(url).toList())
                .clearExcluded().addAllExcluded(snapshot.getExcludedList().stream().sorted(url).toList()).build();
    }

    private static Map<String, FleetWorker> byUrl(Iterable<FleetWorker> workers) {
        Map<String, FleetWorker> out = new TreeMap<>();
        for (FleetWorker w : workers) {
            out.put(w.getUrl(), w);
        }
        return out;
    }
}
