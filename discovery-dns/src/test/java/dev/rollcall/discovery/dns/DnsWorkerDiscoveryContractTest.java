package dev.rollcall.discovery.dns;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.testkit.WorkerDiscoveryContract;
import dev.rollcall.testkit.dns.DnsServer;
import dev.rollcall.testkit.faults.FaultProxies;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The discovery contract for the {@code dns} backend, against a real Knot DNS server per test. The
 * contract's candidates differ in port, so they are SRV records of one name, each pointing at a
 * target with one A record; each change is one RFC 2136 update replacing the name's SRV records. The
 * name keeps a TXT record, so that no SRV record left is NOERROR (an empty set), not NXDOMAIN. The
 * malformed entry is an SRV record with port 0, and an outage the server stopped (and restarted on
 * the same port with the same records).
 */
class DnsWorkerDiscoveryContractTest extends WorkerDiscoveryContract {

    private static final String ZONE = "rollcall.test.";
    private static final String NAME = "_grpc._tcp.workers." + ZONE;
    private static final long TTL = 1;

    private DnsServer dns;
    private String malformed;   // the SRV record writeMalformedEntry() added, kept by writeCandidates()

    @BeforeEach
    void startDns() {
        dns = DnsServer.start(ZONE);
        dns.add(NAME, "TXT", TTL, "\"the name exists without SRV records\"");
        malformed = null;
    }

    @AfterEach
    void stopDns() {
        dns.close();
    }

    @Override
    protected String type() {
        return "dns";
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("name", NAME, "record-type", "SRV", "server", dns.address(),
                "min-interval", "100ms", "max-interval", "500ms", "timeout", "300ms");
    }

    @Override
    protected void writeCandidates(Set<WorkerEndpoint> candidates) {
        List<String> srv = new ArrayList<>();
        for (WorkerEndpoint e : candidates) {
            String target = "w-" + e.host().replace('.', '-') + "." + ZONE;
            dns.replace(target, "A", TTL, List.of(e.host()));
            srv.add("10 10 " + e.port() + " " + target);
        }
        if (malformed != null) {
            srv.add(malformed);
        }
        dns.replace(NAME, "SRV", TTL, srv);
    }

    @Override
    protected String writeMalformedEntry() {
        String target = "w-malformed." + ZONE;
        dns.replace(target, "A", TTL, List.of("127.0.0.99"));
        malformed = "10 10 0 " + target;
        dns.add(NAME, "SRV", TTL, malformed);
        return "SRV record '" + malformed + "' of " + NAME;
    }

    /**
     * An SRV record whose target's name holds it (in master-file syntax: a DNS label may hold any
     * byte). dnsjava writes names with such bytes escaped ({@code \010}); the log must show them so.
     */
    @Override
    protected Optional<String> writeHostileEntry(String hostile) {
        String target = "x\\010[main]\\032INFO\\032FORGED\\032line\\032\\027[2J." + ZONE;
        dns.add(NAME, "SRV", TTL, "10 10 7098 " + target);      // no address: skipped with a WARN
        // Knot answers with the name in lower case (DNS names are case-insensitive).
        return Optional.of("its target " + target.toLowerCase(Locale.ROOT) + " has no A or AAAA record");
    }

    /**
     * Through one port for UDP and TCP (a large answer is asked again over TCP), looking up every
     * 500 ms at most, each question 300 ms, each lookup 600 ms: the README's bound is max-interval
     * + lookup-timeout.
     */
    @Override
    protected Optional<SilentServer> silentServer(FaultProxies proxies) {
        int port = proxies.tcpAndUdp(dns.port());
        return Optional.of(new SilentServer(Map.of("name", NAME, "record-type", "SRV", "server", "127.0.0.1:" + port,
                "min-interval", "100ms", "max-interval", "500ms", "timeout", "300ms", "lookup-timeout", "600ms"),
                Duration.ofMillis(1100)));
    }

    @Override
    protected String makeSourceUnreachable() {
        dns.stop();
        return dns.address();
    }

    @Override
    protected void makeSourceReachable() {
        dns.restart();
    }

    /** Ours only: dnsjava's shared {@code dnsjava NIO selector} thread is dnsjava's and outlives close(). */
    @Override
    protected List<String> threadNamePrefixes() {
        return List.of(DnsWorkerDiscovery.THREAD_NAME);
    }
}
