package dev.rollcall.testkit.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The go-bexpr subset the stand-in evaluates, on one health entry. */
class FilterExpressionTest {

    private static final Map<String, Object> ENTRY = Map.of(
            "Node", Map.of("Node", "n1", "Address", "10.0.0.1", "Datacenter", "dc1", "Meta", Map.of("rack", "r7")),
            "Service", Map.of("ID", "w-1", "Service", "workers", "Tags", List.of("prod", "eu"), "Address", "",
                    "Port", "7001", "Meta", Map.of("zone", "eu-1", "rollcall-version", "1.2.0")));

    private static boolean matches(String expression) {
        return FilterExpression.parse(expression).matches(ENTRY);
    }

    @Test
    void evaluatesEachMatchOperator() {
        assertThat(matches("Service.Meta.zone == \"eu-1\"")).isTrue();
        assertThat(matches("Service.Meta.zone != eu-1")).isFalse();
        assertThat(matches("Service.Tags contains prod")).isTrue();
        assertThat(matches("Service.Tags not contains canary")).isTrue();
        assertThat(matches("\"eu\" in Service.Tags")).isTrue();
        assertThat(matches("\"zone\" not in Service.Meta")).isFalse();
        assertThat(matches("Service.Address is empty")).isTrue();
        assertThat(matches("Node.Meta is not empty")).isTrue();
        assertThat(matches("Service.Meta[\"rollcall-version\"] matches \"^1\\\\.\"")).isTrue();
        assertThat(matches("Service.Port == 7001")).isTrue();
    }

    @Test
    void combinesWithAndOrNotAndParentheses() {
        assertThat(matches("Node.Node == n1 and (Service.Port == 1 or Service.Meta.zone == `eu-1`)")).isTrue();
        assertThat(matches("not Service.Tags contains prod or Node.Datacenter == dc2")).isFalse();
        assertThat(matches("not (Node.Node == n2)")).isTrue();
    }

    @Test
    void refusesUnknownSelectorsAndBrokenExpressions() {
        assertThatThrownBy(() -> FilterExpression.parse("Service.Weights == 1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Selector \"Service.Weights\"");
        assertThatThrownBy(() -> FilterExpression.parse("Service.ID =="))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterExpression.parse("(Service.ID == a"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("')'");
        assertThatThrownBy(() -> FilterExpression.parse("Service.ID == \"a"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unterminated");
    }
}
