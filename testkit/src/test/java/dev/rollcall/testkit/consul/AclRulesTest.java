package dev.rollcall.testkit.consul;

import static dev.rollcall.testkit.consul.AclRules.Access.READ;
import static dev.rollcall.testkit.consul.AclRules.Access.WRITE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Consul's rule precedence: exact over prefix, longest prefix first, write implies read, default deny. */
class AclRulesTest {

    @Test
    void anExactRuleBeatsPrefixesAndTheLongestPrefixWins() {
        AclRules rules = AclRules.parse("""
                # comments are fine
                service_prefix "" { policy = "write" }
                service_prefix "rollcall-" { policy = "read" }
                service "rollcall-admin" { policy = "deny" }
                node_prefix "web-" { policy = "read" }
                """);

        assertThat(rules.serviceAllows("other", WRITE)).isTrue();
        assertThat(rules.serviceAllows("rollcall-workers", READ)).isTrue();
        assertThat(rules.serviceAllows("rollcall-workers", WRITE)).as("the longer prefix says read").isFalse();
        assertThat(rules.serviceAllows("rollcall-admin", READ)).as("exact deny").isFalse();
        assertThat(rules.nodeAllows("web-1", READ)).isTrue();
        assertThat(rules.nodeAllows("db-1", READ)).as("no rule: default deny").isFalse();
    }

    @Test
    void managementAllowsEverythingAndNoneNothing() {
        assertThat(AclRules.ALL.nodeAllows("n", WRITE)).isTrue();
        assertThat(AclRules.NONE.serviceAllows("s", READ)).isFalse();
    }

    @Test
    void refusesWhatIsNotARuleNamingIt() {
        assertThatThrownBy(() -> AclRules.parse("service \"s\" { policy = \"admin\" }"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'admin'");
        assertThatThrownBy(() -> AclRules.parse("service \"s\" { policy = \"read\" } oops"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'oops'");
    }
}
