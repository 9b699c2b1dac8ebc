package dev.rollcall.core.internal.drain;

import dev.rollcall.api.ServingState;
import dev.rollcall.api.registry.FleetSnapshot;
import io.grpc.ManagedChannel;
import java.util.function.Function;

/**
 * What the fleet tracker tells exact drain ({@code rollcall.drain.exact}) and asks of it:
 * {@link DrainReleases} when it is on, {@link #OFF} (holds nothing, releases nothing) when it is
 * not. Serial context, as {@link DrainReleases} says.
 */
public interface ExactDrain {

    /** Exact drain off: no worker is held, nothing is sent, no lease is counted. */
    ExactDrain OFF = new ExactDrain() {
        @Override
        public void answered(String url, String instanceId, ServingState said) {
        }

        @Override
        public void left(String url, String instanceId) {
        }

        @Override
        public boolean holdsLeaver(String url) {
            return false;
        }

        @Override
        public void onLeaverFree(Runnable then) {
        }

        @Override
        public void published(FleetSnapshot snapshot) {
        }

        @Override
        public LeaseTable leases() {
            return null;
        }

        @Override
        public void close() {
        }
    };

    /**
     * Makes the exact drain of a tracker from the tracker's lookup of a worker's kept channel by
     * URL (the channel its {@code ReleaseWorker} goes over): the tracker holds both ends.
     */
    @FunctionalInterface
    interface Maker {
        /** Exact drain off. */
        Maker OFF = channels -> ExactDrain.OFF;

        ExactDrain make(Function<String, ManagedChannel> channels);
    }

    /** See {@link DrainReleases#answered}. */
    void answered(String url, String instanceId, ServingState said);

    /** See {@link DrainReleases#left}. */
    void left(String url, String instanceId);

    /** See {@link DrainReleases#holdsLeaver}. */
    boolean holdsLeaver(String url);

    /** See {@link DrainReleases#onLeaverFree}. */
    void onLeaverFree(Runnable then);

    /** See {@link DrainReleases#published}: the owner of the snapshot calls it on each publish. */
    void published(FleetSnapshot snapshot);

    /** The leases of the published snapshots; null when off (a lease then only pins). */
    LeaseTable leases();

    /** See {@link DrainReleases#close}. */
    void close();
}
