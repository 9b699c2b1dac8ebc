package dev.rollcall.protocol.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.ServingState;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.Caller;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every enum of the protocol, read from the wire: each value this version knows maps to its own
 * meaning, and a number it does not know (a newer worker's) takes the most restrictive reading.
 */
class WireFormatTest {

    private static final WorkerEndpoint ENDPOINT = WorkerEndpoint.parse("grpc://127.0.0.1:7001");

    // ---------------------------------------------------------------- Visibility

    @Test
    void everyKnownVisibilityKeepsItsMeaningBothWays() {
        for (dev.rollcall.protocol.v1.Visibility wire : dev.rollcall.protocol.v1.Visibility.values()) {
            if (wire == dev.rollcall.protocol.v1.Visibility.UNRECOGNIZED) {
                continue;
            }
            Visibility read = WireFormat.fromWire(wire);
            assertThat(read).as("a value of the protocol this version knows: %s", wire).isNotEqualTo(Visibility.UNKNOWN);
            assertThat(WireFormat.toWire(read)).isEqualTo(wire);
        }
    }

    /** The case: an unknown number was read as PUBLIC, and a newer worker's internal-only handler opened to the ingress. */
    @ParameterizedTest
    @ValueSource(ints = {3, 4, 99, Integer.MAX_VALUE, -1})
    void anUnknownVisibilityNumberIsCallableByNoOne(int number) {
        WorkerInfoResponse answer = WorkerInfoResponse.newBuilder().setVersion("2.0.0")
                .addServices(dev.rollcall.protocol.v1.ServiceInfo.newBuilder().setName("orders")
                        .setVisibilityValue(number)
                        .addHandlers(dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName("inherits"))
                        .addHandlers(dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName("own")
                                .setVisibilityValue(number))
                        .addHandlers(dev.rollcall.protocol.v1.HandlerInfo.newBuilder().setName("public")
                                .setVisibility(dev.rollcall.protocol.v1.Visibility.VISIBILITY_PUBLIC)))
                .build();
        // As the coordinator receives it: bytes of a newer schema, parsed with this one.
        WorkerInfo info = WireFormat.toWorkerInfo(ENDPOINT, reparse(answer));

        ServiceInfo orders = info.services().get(0);
        assertThat(orders.visibility()).isEqualTo(Visibility.UNKNOWN);
        for (HandlerInfo h : orders.handlers()) {
            Visibility effective = orders.effectiveVisibility(h);
            boolean open = h.name().equals("public");
            assertThat(effective).as(h.name()).isEqualTo(open ? Visibility.PUBLIC : Visibility.UNKNOWN);
            for (Caller caller : Caller.values()) {
                assertThat(caller.mayCall(effective)).as(h.name() + " by " + caller).isEqualTo(open);
            }
        }
    }

    @Test
    void noWorkerCanDeclareTheUnknownVisibility() {
        List<ServiceInfo> services = List.of(new ServiceInfo("orders", Visibility.PUBLIC,
                List.of(new HandlerInfo("cancel", Optional.of(Visibility.UNKNOWN)))));
        assertThatThrownBy(() -> WireFormat.toResponse("1.0.0", "i", Map.of(), services))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UNKNOWN");
    }

    // ---------------------------------------------------------------- ServingState

    @Test
    void everyKnownServingStateKeepsItsMeaningBothWays() {
        for (dev.rollcall.protocol.v1.ServingState wire : dev.rollcall.protocol.v1.ServingState.values()) {
            if (wire == dev.rollcall.protocol.v1.ServingState.UNRECOGNIZED) {
                continue;
            }
            assertThat(WireFormat.toWire(WireFormat.fromWire(wire))).as(wire.name()).isEqualTo(wire);
        }
        assertThat(Arrays.stream(ServingState.values()).map(WireFormat::toWire).map(WireFormat::fromWire))
                .containsExactly(ServingState.values());
    }

    /** A state a newer worker invented keeps it out of new snapshots: not serving, never SERVING. */
    @ParameterizedTest
    @ValueSource(ints = {3, 42, Integer.MAX_VALUE, -1})
    void anUnknownServingStateNumberIsNotServing(int number) {
        WorkerInfoResponse answer = reparse(WorkerInfoResponse.newBuilder().setVersion("2.0.0").setStateValue(number)
                .build());
        assertThat(answer.getState()).isEqualTo(dev.rollcall.protocol.v1.ServingState.UNRECOGNIZED);
        assertThat(WireFormat.fromWire(answer.getState())).isEqualTo(ServingState.NOT_SERVING);
    }

    private static WorkerInfoResponse reparse(WorkerInfoResponse answer) {
        try {
            return WorkerInfoResponse.parseFrom(answer.toByteArray());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    // ---------------------------------------------------------------- holders

    @Test
    void holdersAreReadOnlyFromADrainingAnswerWithARevision() {
        WorkerInfoResponse.Builder draining = WorkerInfoResponse.newBuilder()
                .setState(dev.rollcall.protocol.v1.ServingState.DRAINING).setRevision(7);
        assertThat(WireFormat.holders(draining.setHolders(2).build())).hasValue(2);
        assertThat(WireFormat.holders(draining.setHolders(0).build())).as("nobody holds it").hasValue(0);
        assertThat(WireFormat.holders(draining.setHolders(-1).build())).as("unsigned, past int")
                .hasValue(Integer.MAX_VALUE);
        assertThat(WireFormat.holders(draining.setRevision(0).setHolders(3).build()))
                .as("no revision: a worker older than the count").isEmpty();
        assertThat(WireFormat.holders(WorkerInfoResponse.newBuilder().setRevision(7).build()))
                .as("serving").isEqualTo(OptionalInt.empty());
    }

    @Test
    void anAnswerCarriesHoldersOnlyWhileDraining() {
        WorkerInfo info = WorkerInfo.of(ENDPOINT, "1");
        assertThat(new dev.rollcall.protocol.ProbeOutcome.Answered(info, ServingState.DRAINING, 3).holders()).isEmpty();
        assertThat(new dev.rollcall.protocol.ProbeOutcome.Answered(info, ServingState.DRAINING, 3, OptionalInt.of(0))
                .holders()).hasValue(0);
        assertThatThrownBy(() -> new dev.rollcall.protocol.ProbeOutcome.Answered(info, ServingState.SERVING, 3,
                OptionalInt.of(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holders 1");
    }
}
