package dev.rollcall.api.registry;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/** Builds a fixed snapshot and routes a key: loaded by {@link KeyRoutingTest} in a class loader without protobuf. */
public final class RoutingWithoutProtobuf implements Supplier<String> {

    @Override
    public String get() {
        WorkerEndpoint e = WorkerEndpoint.of("127.0.0.1", 7000);
        WorkerInfo info = new WorkerInfo(e, "1.0.0", "", Map.of(),
                List.of(new ServiceInfo("demo.v1.Orders", Visibility.PUBLIC, List.of(HandlerInfo.of("Place")))));
        FleetSnapshot snap = FleetSnapshot.builder(1).publishedAt(Instant.EPOCH)
                .status(new WorkerStatus(e, WorkerStatus.State.COMPATIBLE, "", Optional.of(info))).build();
        return snap.route("demo.v1.Orders", "Place", Caller.INGRESS, "customer-1").endpoint().url();
    }
}
