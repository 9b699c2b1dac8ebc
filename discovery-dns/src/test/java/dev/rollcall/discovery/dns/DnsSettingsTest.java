package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.discovery.dns.DnsSettings.RecordType;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading and checking {@code rollcall.discovery.dns.*}, without any DNS server. */
class DnsSettingsTest {

    static Settings settings(Map<String, String> relative) {
        Map<String, String> full = new HashMap<>();
        relative.forEach((k, v) -> full.put("rollcall.discovery.dns." + k, v));
        return Settings.of(full).scope("rollcall.discovery.dns.");
    }

    private static DnsSettings read(Map<String, String> relative) {
        return DnsSettings.read(settings(relative));
    }

    @Test
    void appliesTheDocumentedDefaults() {
        DnsSettings s = read(Map.of("name", "workers.example.com", "port", "7001"));

        assertThat(s.name()).isEqualTo("workers.example.com.");
        assertThat(s.recordType()).isEqualTo(RecordType.A);
        assertThat(s.port()).isEqualTo(7001);
        assertThat(s.tls()).isFalse();
        assertThat(s.server()).isEmpty();
        assertThat(s.minInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.maxInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.lookupTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.silenceBound()).as("the README's bound for a silent server").isEqualTo(Duration.ofSeconds(35));
    }

    @Test
    void refusesALookupTimeoutShorterThanTheTimeoutOfOneQuestion() {
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "1", "timeout", "3s", "lookup-timeout", "2s")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.discovery.dns.lookup-timeout")
                .hasMessageContaining("rollcall.discovery.dns.timeout");
    }

    @Test
    void readsSrvWithAServerAndTls() {
        DnsSettings s = read(Map.of("name", "_grpc._tcp.workers.example.com.", "record-type", "srv",
                "scheme", "grpcs", "server", "[::1]:5353"));

        assertThat(s.recordType()).isEqualTo(RecordType.SRV);
        assertThat(s.tls()).isTrue();
        assertThat(s.serverText()).isEqualTo("[0:0:0:0:0:0:0:1]:5353");
        assertThat(read(Map.of("name", "w.example", "port", "1", "server", "10.0.0.2")).serverText())
                .isEqualTo("10.0.0.2:53");
    }

    @Test
    void requiresANameAndRejectsOneThatIsNotADnsName() {
        assertThatThrownBy(() -> read(Map.of("port", "7001")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("rollcall.discovery.dns.name");
        assertThatThrownBy(() -> read(Map.of("name", "workers example", "port", "7001")))
                .hasMessageContaining("rollcall.discovery.dns.name").hasMessageContaining("workers example");
    }

    @Test
    void requiresAPortForAddressRecordsAndRefusesOneForSrv() {
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "record-type", "AAAA")))
                .hasMessageContaining("rollcall.discovery.dns.port").hasMessageContaining("AAAA");
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "record-type", "SRV", "port", "7001")))
                .hasMessageContaining("rollcall.discovery.dns.port").hasMessageContaining("SRV");
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "70000")))
                .hasMessageContaining("rollcall.discovery.dns.port").hasMessageContaining("70000");
    }

    @Test
    void rejectsUnknownRecordTypesSchemesAndServers() {
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "record-type", "TXT")))
                .hasMessageContaining("rollcall.discovery.dns.record-type").hasMessageContaining("TXT");
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "1", "scheme", "ftp")))
                .hasMessageContaining("rollcall.discovery.dns.scheme").hasMessageContaining("ftp");
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "1", "server", "dns.example.com:53")))
                .hasMessageContaining("rollcall.discovery.dns.server").hasMessageContaining("not an IP address");
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "1", "server", "127.0.0.1:0")))
                .hasMessageContaining("rollcall.discovery.dns.server");
    }

    @Test
    void rejectsAMaxIntervalBelowTheMinInterval() {
        assertThatThrownBy(() -> read(Map.of("name", "w.example", "port", "1", "min-interval", "10s",
                "max-interval", "5s")))
                .hasMessageContaining("rollcall.discovery.dns.max-interval")
                .hasMessageContaining("rollcall.discovery.dns.min-interval");
    }

    @Test
    void theTtlIsClampedToTheIntervals() {
        DnsSettings s = read(Map.of("name", "w.example", "port", "1", "min-interval", "2s", "max-interval", "1m"));

        assertThat(s.refreshDelay(0)).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.refreshDelay(1)).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.refreshDelay(30)).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.refreshDelay(86_400)).isEqualTo(Duration.ofMinutes(1));
    }
}
