package dev.rollcall.api.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The small value types of the registry: what they expose, compare and print. */
class RegistryValuesTest {

    @Test
    void keyPathsCompareByTheirPathsAndShowThemAsWritten() {
        KeyPaths a = KeyPaths.of(Map.of("demo.v1.Orders.Place", "order.customer_id"));
        KeyPaths same = KeyPaths.of(Map.of("demo.v1.Orders.Place", "order.customer_id"));
        KeyPaths other = KeyPaths.of(Map.of("demo.v1.Orders.Place", "order.id"));

        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same).isNotEqualTo(other).isNotEqualTo(KeyPaths.none())
                .isNotEqualTo("order.customer_id");
        assertThat(a.asMap()).containsExactly(Map.entry("demo.v1.Orders.Place", "order.customer_id"));
        assertThat(a).hasToString("KeyPaths{demo.v1.Orders.Place=order.customer_id}");
        assertThat(KeyPaths.none().asMap()).isEmpty();
        assertThat(a.path("demo.v1.Orders", "Place")).contains(List.of("order", "customer_id"));
    }

    @Test
    void theEmptySchemaHasNothingAndSaysSo() {
        ProtoSchema empty = ProtoSchema.empty();

        assertThat(empty.isEmpty()).isTrue();
        assertThat(empty.services()).isEmpty();
        assertThat(empty.files()).isEmpty();
        assertThat(empty.service("demo.v1.Orders")).isEmpty();
        assertThat(empty.file("demo/v1/orders.proto")).isEmpty();
        assertThat(empty).hasToString("ProtoSchema[] (0 files)");
    }

    @Test
    void exceptionsCarryWhereTheyHappened() {
        Throwable cause = new IllegalStateException("bad");
        JsonMappingException json = new JsonMappingException(JsonMappingException.Reason.BAD_FIELD, "demo.v1.Orders",
                "Place", "order.id", "order.id is not a number", cause);
        KeyExtractionException key = new KeyExtractionException(KeyExtractionException.Reason.KEY_MISSING,
                "demo.v1.Orders", "Place", "no customer_id");

        assertThat(json.reason()).isEqualTo(JsonMappingException.Reason.BAD_FIELD);
        assertThat(json.service()).isEqualTo("demo.v1.Orders");
        assertThat(json.method()).isEqualTo("Place");
        assertThat(json.fieldPath()).isEqualTo("order.id");
        assertThat(json).hasMessage("order.id is not a number").hasCause(cause);
        assertThat(key.reason()).isEqualTo(KeyExtractionException.Reason.KEY_MISSING);
        assertThat(key.service()).isEqualTo("demo.v1.Orders");
        assertThat(key.method()).isEqualTo("Place");
        assertThat(key).hasMessage("no customer_id");
    }

    @Test
    void unusedOptionalIsNotAPath() {
        assertThat(KeyPaths.none().path("demo.v1.Orders", "Place")).isEqualTo(Optional.empty());
    }
}
