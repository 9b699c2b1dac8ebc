package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.WorkerEndpoint;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthEntriesTest {

    private static HealthEntries.Parsed parse(String body) {
        return HealthEntries.parse(body, ConsulKeys.VERSION_META.defaultValue());
    }

    private static String entry(String service, String node) {
        return "{\"Node\":" + node + ",\"Service\":" + service + ",\"Checks\":[]}";
    }

    private static final String NODE = "{\"Node\":\"n1\",\"Address\":\"10.0.0.1\",\"Datacenter\":\"dc1\",\"Meta\":{}}";

    @Test
    void usesTheServiceAddressOrElseTheNodeAddress() {
        HealthEntries.Parsed parsed = parse("[" + String.join(",",
                entry("{\"ID\":\"a\",\"Service\":\"w\",\"Address\":\"10.0.0.9\",\"Port\":7001}", NODE),
                entry("{\"ID\":\"b\",\"Service\":\"w\",\"Address\":\"\",\"Port\":7002}", NODE)) + "]");

        assertThat(parsed.endpoints()).extracting(WorkerEndpoint::url)
                .containsExactly("grpc://10.0.0.9:7001", "grpc://10.0.0.1:7002");
        assertThat(parsed.skipped()).isEmpty();
    }

    @Test
    void leavesOutEntriesWhoseNodeCheckIsCriticalButNotThoseWithAFailingServiceCheck() {
        String serfCritical = "[{\"CheckID\":\"serfHealth\",\"ServiceID\":\"\",\"Status\":\"critical\"}]";
        String serviceCritical = "[{\"CheckID\":\"serfHealth\",\"ServiceID\":\"\",\"Status\":\"passing\"},"
                + "{\"CheckID\":\"service:b\",\"ServiceID\":\"b\",\"Status\":\"critical\"}]";
        HealthEntries.Parsed parsed = parse("[" + String.join(",",
                "{\"Node\":" + NODE + ",\"Service\":{\"ID\":\"a\",\"Service\":\"w\",\"Port\":7001},\"Checks\":"
                        + serfCritical + "}",
                "{\"Node\":" + NODE + ",\"Service\":{\"ID\":\"b\",\"Service\":\"w\",\"Port\":7002},\"Checks\":"
                        + serviceCritical + "}") + "]");

        assertThat(parsed.endpoints()).extracting(WorkerEndpoint::url)
                .as("service checks are the query's business (passing-only); a dead node is always out")
                .containsExactly("grpc://10.0.0.1:7002");
        assertThat(parsed.nodeDown()).containsExactly("service ID 'a' on node 'n1': its node's check 'serfHealth' is critical");
        assertThat(parsed.skipped()).isEmpty();
    }

    @Test
    void deliversTheWorkersInstanceIdFromItsMetaAsTheRollcallInstanceIdLabel() {
        HealthEntries.Parsed parsed = parse("[" + entry("{\"ID\":\"a\",\"Service\":\"w\",\"Port\":7001,"
                + "\"Meta\":{\"rollcall-instance\":\"4f1c\",\"rollcall-version\":\"1.2.0\"}}", NODE) + "]");

        assertThat(parsed.endpoints().iterator().next().labels())
                .containsEntry("rollcall.instance-id", "4f1c").containsEntry("rollcall-instance", "4f1c");
    }

    @Test
    void turnsTagsMetaAndPlacementIntoLabels() {
        HealthEntries.Parsed parsed = parse("[" + entry("{\"ID\":\"a\",\"Service\":\"w\",\"Port\":7001,"
                + "\"Tags\":[\"x\",\"y\"],\"Meta\":{\"zone\":\"eu-1\",\"rollcall-scheme\":\"grpcs\"}}", NODE) + "]");

        WorkerEndpoint e = parsed.endpoints().iterator().next();
        assertThat(e.url()).isEqualTo("grpcs://10.0.0.1:7001");
        assertThat(e.labels()).containsOnly(
                java.util.Map.entry("consul.service-id", "a"), java.util.Map.entry("consul.node", "n1"),
                java.util.Map.entry("consul.datacenter", "dc1"), java.util.Map.entry("consul.tags", "x,y"),
                java.util.Map.entry("zone", "eu-1"));
    }

    @Test
    void skipsEachMalformedEntryWithItsReasonAndKeepsTheRest() {
        HealthEntries.Parsed parsed = parse("[" + String.join(",",
                entry("{\"ID\":\"good\",\"Service\":\"w\",\"Port\":7001}", NODE),
                entry("{\"ID\":\"text-port\",\"Service\":\"w\",\"Port\":\"x\"}", NODE),
                entry("{\"ID\":\"no-port\",\"Service\":\"w\"}", NODE),
                entry("{\"ID\":\"big-port\",\"Service\":\"w\",\"Port\":70000}", NODE),
                entry("{\"ID\":\"bad-host\",\"Service\":\"w\",\"Address\":\"a b\",\"Port\":7005}", NODE),
                entry("{\"ID\":\"scheme\",\"Service\":\"w\",\"Port\":7006,\"Meta\":{\"rollcall-scheme\":\"ftp\"}}", NODE),
                entry("{\"ID\":\"no-address\",\"Service\":\"w\",\"Port\":7007}", "{\"Node\":\"n2\"}"),
                "{\"Node\":" + NODE + "}",
                "42") + "]");

        assertThat(parsed.endpoints()).extracting(WorkerEndpoint::url).containsExactly("grpc://10.0.0.1:7001");
        assertThat(parsed.skipped()).hasSize(8);
        assertThat(String.join("\n", parsed.skipped()))
                .contains("service ID 'text-port' on node 'n1': it does not match Consul's health entry format")
                .contains("service ID 'no-port' on node 'n1': it has no port")
                .contains("service ID 'big-port' on node 'n1': port 70000 is outside 1..65535")
                .contains("service ID 'bad-host' on node 'n1': worker endpoint host 'a b' has a character that no host")
                .contains("service ID 'scheme' on node 'n1': its meta rollcall-scheme='ftp' is not grpc or grpcs")
                .contains("service ID 'no-address' on node 'n2': it has neither a service address nor a node address")
                .contains("node 'n1': it has no Service")
                .contains("entry 8: it is a value, not an object");
    }

    @Test
    void keepsTheFirstOfTwoEntriesWithOneAddress() {
        HealthEntries.Parsed parsed = parse("[" + String.join(",",
                entry("{\"ID\":\"new\",\"Service\":\"w\",\"Port\":7001}", NODE),
                entry("{\"ID\":\"stale\",\"Service\":\"w\",\"Port\":7001}", NODE)) + "]");

        assertThat(parsed.endpoints()).singleElement()
                .satisfies(e -> assertThat(e.labels()).containsEntry("consul.service-id", "new"));
        assertThat(parsed.duplicates()).containsExactly("service ID 'stale' on node 'n1' has the address of new");
        assertThat(parsed.skipped()).isEmpty();
    }

    @Test
    void anEmptyArrayIsNoInstances() {
        assertThat(parse("[]").endpoints()).isEmpty();
    }

    @Test
    void rejectsABodyThatIsNotAnArrayAsAWhole() {
        for (String body : List.of("{\"error\":\"x\"}", "not json {", "", "null")) {
            assertThatThrownBy(() -> parse(body)).as(body)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("health answer");
        }
    }

    @Test
    void theVersionMetaIsTheClaimedVersionAndAHostileOneSkipsOnlyItsEntryNamingIt() {
        HealthEntries.Parsed parsed = parse("[" + String.join(",",
                entry("{\"ID\":\"a\",\"Service\":\"w\",\"Port\":7001,\"Meta\":{\"version\":\"1.4.0\"}}", NODE),
                entry("{\"ID\":\"b\",\"Service\":\"w\",\"Port\":7002,\"Meta\":{\"version\":\"1.4.0\\u001b]8;;x\"}}", NODE),
                entry("{\"ID\":\"c\",\"Service\":\"w\",\"Port\":7003,\"Meta\":{\"version\":\"" + "9".repeat(400) + "\"}}",
                        NODE),
                entry("{\"ID\":\"d\",\"Service\":\"w\",\"Port\":7004,\"Meta\":{\"version\":\"\"}}", NODE)) + "]");

        assertThat(parsed.endpoints()).extracting(e -> e.labels().get(WorkerEndpoint.VERSION_LABEL))
                .containsExactly("1.4.0", null);
        assertThat(parsed.skipped()).containsExactly(
                "service ID 'b' on node 'n1': its meta version: the version '1.4.0\\u001b]8;;x' holds white space or a"
                        + " control character",
                "service ID 'c' on node 'n1': its meta version: the version is 400 characters long (at most 256): '"
                        + "9".repeat(64) + "...(336 more)'");
    }

    @Test
    void anotherVersionMetaKeyOrNoneIsHonoured() {
        String body = "[" + entry("{\"ID\":\"a\",\"Service\":\"w\",\"Port\":7001,"
                + "\"Meta\":{\"version\":\"1.4.0\",\"app-version\":\"2.0.0\"}}", NODE) + "]";

        assertThat(HealthEntries.parse(body, "app-version").endpoints().iterator().next().labels())
                .containsEntry(WorkerEndpoint.VERSION_LABEL, "2.0.0");
        assertThat(HealthEntries.parse(body, null).endpoints().iterator().next().labels())
                .doesNotContainKey(WorkerEndpoint.VERSION_LABEL).containsEntry("version", "1.4.0");
    }
}
