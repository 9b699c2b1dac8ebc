package dev.rollcall.console;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import java.util.function.Consumer;

/**
 * Where a console's snapshots come from: a {@link WorkerResolver} in production; the scale
 * measurement feeds its own. {@link #subscribe} keeps the resolver's promise: each call on a thread
 * of the source's own, latest wins, in increasing number, first with the current one.
 */
interface SnapshotSource {

    String name();

    String discoveryDescription();

    FleetSnapshot current();

    /** Calls {@code listener} with every new snapshot until the returned handle is closed. */
    AutoCloseable subscribe(Consumer<FleetSnapshot> listener);

    static SnapshotSource of(WorkerResolver resolver) {
        return new SnapshotSource() {
            @Override
            public String name() {
                return resolver.name();
            }

            @Override
            public String discoveryDescription() {
                return resolver.discoveryDescription();
            }

            @Override
            public FleetSnapshot current() {
                return resolver.pin();
            }

            @Override
            public AutoCloseable subscribe(Consumer<FleetSnapshot> listener) {
                return resolver.addListener(listener::accept);
            }
        };
    }
}
