package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.TargetLookupException.Reason;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class InvocationTargetsTest {

    private static WorkerStatus worker(int port, String version, State state, ServiceInfo... services) {
        WorkerEndpoint endpoint = WorkerEndpoint.parse("grpc://127.0.0.1:" + port);
        WorkerInfo info = new WorkerInfo(endpoint, version, "i-" + port, Map.of(), List.of(services));
        return new WorkerStatus(endpoint, state, state == State.COMPATIBLE ? "" : "not used", Optional.of(info));
    }

    private static FleetSnapshot snapshot(WorkerStatus... statuses) {
        return FleetSnapshot.builder(1).publishedAt(Instant.EPOCH).policy("test").statuses(List.of(statuses)).build();
    }

    private static ServiceInfo service(String name, Visibility visibility, HandlerInfo... handlers) {
        return new ServiceInfo(name, visibility, List.of(handlers));
    }

    private static HandlerInfo handler(String name, Visibility visibility) {
        return new HandlerInfo(name, Optional.ofNullable(visibility));
    }

    /** Every combination of a service's visibility, a handler's override (or none) and the caller. */
    @ParameterizedTest(name = "service {0}, handler {1}: ingress {2}, internal {3}")
    @CsvSource({
            "PUBLIC,   ,         ok,         ok",
            "INTERNAL, ,         NOT_PUBLIC, ok",
            "EXTERNAL, ,         ok,         NOT_INTERNAL",
            "PUBLIC,   INTERNAL, NOT_PUBLIC, ok",
            "PUBLIC,   EXTERNAL, ok,         NOT_INTERNAL",
            "INTERNAL, PUBLIC,   ok,         ok",
            "INTERNAL, EXTERNAL, ok,         NOT_INTERNAL",
            "EXTERNAL, PUBLIC,   ok,         ok",
            "EXTERNAL, INTERNAL, NOT_PUBLIC, ok",
            "UNKNOWN,  ,         NOT_PUBLIC, NOT_INTERNAL",
            "PUBLIC,   UNKNOWN,  NOT_PUBLIC, NOT_INTERNAL",
            "INTERNAL, UNKNOWN,  NOT_PUBLIC, NOT_INTERNAL",
            "UNKNOWN,  PUBLIC,   ok,         ok",
            "UNKNOWN,  INTERNAL, NOT_PUBLIC, ok",
    })
    void handlerInheritsOrOverridesItsServicesVisibilityForBothCallers(Visibility serviceVisibility,
            Visibility handlerVisibility, String ingress, String internal) {
        FleetSnapshot snap = snapshot(worker(7001, "1.0.0", State.COMPATIBLE,
                service("orders", serviceVisibility, handler("cancel", handlerVisibility))));
        Visibility effective = handlerVisibility != null ? handlerVisibility : serviceVisibility;
        assertThat(snap.targets()).singleElement()
                .satisfies(t -> assertThat(t.visibility()).isEqualTo(effective));
        check(snap, Caller.INGRESS, ingress);
        check(snap, Caller.INTERNAL, internal);
    }

    private static void check(FleetSnapshot snap, Caller caller, String expected) {
        if (expected.equals("ok")) {
            assertThat(snap.target("orders", "cancel", caller).endpoints())
                    .containsExactly(WorkerEndpoint.parse("grpc://127.0.0.1:7001"));
        } else {
            assertThatThrownBy(() -> snap.target("orders", "cancel", caller))
                    .isInstanceOfSatisfying(TargetLookupException.class, e -> {
                        assertThat(e.reason()).isEqualTo(Reason.valueOf(expected));
                        assertThat(e.caller()).isEqualTo(caller);
                    })
                    .hasMessageContaining("service 'orders' handler 'cancel'");
        }
    }

    /** A visibility from a newer worker that this version does not know: no caller gets in, and the message says why. */
    @Test
    void aTargetOfUnknownVisibilityIsRefusedToEveryCallerSayingSo() {
        FleetSnapshot snap = snapshot(worker(7001, "2.0.0", State.COMPATIBLE,
                service("orders", Visibility.PUBLIC, handler("cancel", Visibility.UNKNOWN))));
        for (Caller caller : Caller.values()) {
            assertThat(caller.mayCall(Visibility.UNKNOWN)).isFalse();
            assertThatThrownBy(() -> snap.target("orders", "cancel", caller))
                    .isInstanceOf(TargetLookupException.class)
                    .hasMessage("service 'orders' handler 'cancel' has a visibility this version of Rollcall does"
                            + " not know (sent by a newer worker): no caller may call it");
        }
    }

    /** An older worker that declares the handler public still serves it; the newer one of unknown visibility is left out. */
    @Test
    void workersOfUnknownVisibilityAreLeftOutOfATargetOthersOffer() {
        FleetSnapshot snap = snapshot(
                worker(7001, "1.0.0", State.COMPATIBLE, service("orders", Visibility.PUBLIC, handler("cancel", null))),
                worker(7002, "2.0.0", State.COMPATIBLE,
                        service("orders", Visibility.PUBLIC, handler("cancel", Visibility.UNKNOWN))));
        for (Caller caller : Caller.values()) {
            assertThat(snap.target("orders", "cancel", caller).endpoints())
                    .containsExactly(WorkerEndpoint.parse("grpc://127.0.0.1:7001"));
        }
    }

    @Test
    void ingressAskingForAnInternalTargetIsToldItIsNotPublic() {
        FleetSnapshot snap = snapshot(worker(7001, "1.0.0", State.COMPATIBLE,
                service("billing", Visibility.INTERNAL, HandlerInfo.of("charge"))));
        assertThatThrownBy(() -> snap.target("billing", "charge", Caller.INGRESS))
                .isInstanceOfSatisfying(TargetLookupException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.NOT_PUBLIC);
                    assertThat(e.service()).isEqualTo("billing");
                    assertThat(e.handler()).isEqualTo("charge");
                })
                .hasMessage("service 'billing' handler 'charge' is not public: it is internal, "
                        + "callable only from other services");
    }

    @Test
    void serviceAskingForAnExternalTargetIsToldItIsNotInternal() {
        FleetSnapshot snap = snapshot(worker(7001, "1.0.0", State.COMPATIBLE,
                service("web", Visibility.EXTERNAL, HandlerInfo.of("login"))));
        assertThatThrownBy(() -> snap.target("web", "login", Caller.INTERNAL))
                .isInstanceOfSatisfying(TargetLookupException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.NOT_INTERNAL))
                .hasMessage("service 'web' handler 'login' is not internal: it is external, "
                        + "callable only from the ingress");
    }

    @Test
    void unknownTargetIsNotFound() {
        FleetSnapshot snap = snapshot(worker(7001, "1.0.0", State.COMPATIBLE,
                service("orders", Visibility.PUBLIC, HandlerInfo.of("cancel"))));
        for (String[] unknown : new String[][] {{"orders", "refund"}, {"stock", "cancel"}}) {
            assertThatThrownBy(() -> snap.target(unknown[0], unknown[1], Caller.INTERNAL))
                    .isInstanceOfSatisfying(TargetLookupException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND))
                    .hasMessage("service '" + unknown[0] + "' handler '" + unknown[1]
                            + "' not found: no worker offers it");
        }
    }

    @Test
    void targetOfferedOnlyByIncompatibleWorkersHasNoCompatibleWorker() {
        ServiceInfo udf = service("udf", Visibility.PUBLIC, HandlerInfo.of("geo_distance"));
        FleetSnapshot snap = snapshot(
                worker(7001, "2.0.0", State.REJECTED, udf),
                worker(7002, "2.0.0", State.REJECTED, udf),
                worker(7003, "1.9.0", State.UNREACHABLE, udf),
                worker(7004, "1.0.0", State.COMPATIBLE, service("orders", Visibility.PUBLIC, HandlerInfo.of("x"))));
        assertThatThrownBy(() -> snap.target("udf", "geo_distance", Caller.INGRESS))
                .isInstanceOfSatisfying(TargetLookupException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.NO_COMPATIBLE_WORKER))
                .hasMessage("service 'udf' handler 'geo_distance' has no compatible worker: only "
                        + "2 rejected workers (versions 2.0.0), 1 unreachable worker offer it");
        assertThat(snap.services()).containsExactly("orders");
    }

    @Test
    void lookupReturnsOnlyTheWorkersThatLetTheCallerIn() {
        // During an upgrade the new version made "cancel" internal: the ingress may use only old workers.
        FleetSnapshot snap = snapshot(
                worker(7001, "1.0.0", State.COMPATIBLE,
                        service("orders", Visibility.PUBLIC, HandlerInfo.of("cancel"))),
                worker(7002, "1.1.0", State.COMPATIBLE,
                        service("orders", Visibility.PUBLIC, handler("cancel", Visibility.INTERNAL))));
        assertThat(snap.target("orders", "cancel", Caller.INGRESS).endpoints())
                .containsExactly(WorkerEndpoint.parse("grpc://127.0.0.1:7001"));
        assertThat(snap.target("orders", "cancel", Caller.INTERNAL).endpoints()).hasSize(2);
        assertThat(snap.targets()).singleElement().satisfies(t -> {
            assertThat(t.visibility()).as("the newest version's declaration").isEqualTo(Visibility.INTERNAL);
            assertThat(t.workers()).hasSize(2);
        });
    }

    @Test
    void servicesViewListsWhatCompatibleWorkersOffer() {
        FleetSnapshot snap = snapshot(
                worker(7001, "1.0.0", State.COMPATIBLE, ServiceInfo.of("orders"), ServiceInfo.of("stock")),
                worker(7002, "1.0.0", State.COMPATIBLE, ServiceInfo.of("orders")),
                worker(7003, "2.0.0", State.REJECTED, ServiceInfo.of("billing")));
        WorkerServices services = snap;
        assertThat(services.services()).containsExactly("orders", "stock");
        assertThat(services.workersOffering("orders")).extracting(w -> w.endpoint().port())
                .containsExactly(7001, 7002);
        assertThat(services.workersOffering("billing")).isEmpty();
        assertThat(services.workersOffering("nothing")).isEmpty();
    }

    @Test
    void latestEndpointsForAServiceAreThoseOnTheNewestVersionOfferingIt() {
        FleetSnapshot snap = snapshot(
                worker(7001, "1.9.0", State.COMPATIBLE, ServiceInfo.of("orders")),
                worker(7002, "1.10.0", State.COMPATIBLE, ServiceInfo.of("orders")),
                worker(7003, "1.10.0", State.COMPATIBLE, ServiceInfo.of("orders")),
                worker(7004, "1.11.0-rc.1", State.COMPATIBLE, ServiceInfo.of("stock")),
                worker(7005, "1.11.0", State.REJECTED, ServiceInfo.of("orders")));
        assertThat(snap.latestEndpoints("orders")).extracting(WorkerEndpoint::port).containsExactly(7002, 7003);
        assertThat(snap.latestEndpoints("stock")).extracting(WorkerEndpoint::port).containsExactly(7004);
        assertThat(snap.latestEndpoints("billing")).isEmpty();
    }
}
