package dev.rollcall.testkit.dns;

import dev.rollcall.local.internal.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;
import org.xbill.DNS.Update;

/**
 * A real authoritative DNS server on loopback, for tests: Knot DNS ({@code knotd}, Debian's
 * {@code knot} package), serving one zone whose records the test edits through RFC 2136 dynamic
 * updates, which Knot applies at once without a restart.
 *
 * <pre>{@code
 * try (DnsServer dns = DnsServer.start("rollcall.test.")) {
 *     dns.add("_grpc._tcp.workers.rollcall.test.", "SRV", 5, "10 60 7001 w1.rollcall.test.");
 *     dns.add("w1.rollcall.test.", "A", 5, "127.0.0.1");
 *     String server = dns.address();          // 127.0.0.1:<free port>, for rollcall.discovery.dns.server
 *     dns.failZone();                         // the zone answers SERVFAIL (its records are gone)
 *     dns.restoreZone();                      // an empty zone again, answering NOERROR
 *     dns.stop();                             // no answers at all: lookups time out
 *     dns.restart();                          // same port, same records
 * }
 * }</pre>
 *
 * <p>It runs the {@code knotd} named by the environment variable {@value #BINARY_ENV}, or else
 * {@code /usr/sbin/knotd}, with {@code knotc} beside it; when there is none, {@link #start} throws
 * {@link DnsServerNotInstalledException}, whose message says how to install it. The server listens
 * on one free loopback port (UDP and TCP) with its own configuration, zone file and working
 * directory under a temporary directory; a {@code knot} service the package may have started is
 * neither used nor disturbed. Updates are accepted from 127.0.0.0/8 only, without a key.
 *
 * <p>Thread-safe. {@link #close()} kills the server and deletes its directory; a JVM shutdown hook
 * does the same if a test run dies before closing it.
 */
public final class DnsServer implements AutoCloseable {

    /** Environment variable naming the {@code knotd} binary to run. */
    public static final String BINARY_ENV = "ROLLCALL_KNOTD_BINARY";

    private static final Path DEBIAN_BINARY = Path.of("/usr/sbin/knotd");
    private static final Duration READY_WITHIN = Duration.ofSeconds(20);
    private static final Duration STOP_WITHIN = Duration.ofSeconds(10);
    private static final Duration UPDATE_TIMEOUT = Duration.ofSeconds(5);
    private static final AtomicInteger SERVERS = new AtomicInteger();

    private final Path knotd;
    private final Path knotc;
    private final Path home;
    private final Path logFile;
    private final int port;
    private final Name zone;
    private final ServerProcess child;
    private boolean zoneFailed;   // guarded by this: failZone() until restoreZone()

    private DnsServer(Path knotd, Path home, Path logFile, int port, Name zone) {
        this.knotd = knotd;
        this.knotc = knotd.resolveSibling("knotc");
        this.home = home;
        this.logFile = logFile;
        this.port = port;
        this.zone = zone;
        this.child = new ServerProcess(home, "rollcall-dns-server-cleanup", STOP_WITHIN);
    }

    /**
     * Starts Knot on a free loopback port serving {@code zone} (e.g. {@code rollcall.test.}) with
     * only its SOA and NS records, and waits until it answers.
     *
     * @throws DnsServerNotInstalledException when no knotd is found
     * @throws IllegalStateException          when it exits or does not answer within 20 s (the
     *                                        message quotes the end of its log)
     */
    public static DnsServer start(String zone) {
        Path binary = findBinary(System.getenv(), DEBIAN_BINARY);
        Name zoneName = name(zone);
        int n = SERVERS.incrementAndGet();
        Path home;
        try {
            home = Files.createTempDirectory("rollcall-knot-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for knotd", e);
        }
        int port = freePort();
        Path logDir = Files.isDirectory(Path.of("target")) ? Path.of("target", "knot").toAbsolutePath() : home;
        Path log = logDir.resolve("knot-" + ProcessHandle.current().pid() + "-" + n + "-" + port + ".log");
        DnsServer server = new DnsServer(binary, home, log, port, zoneName);
        try {
            Files.createDirectories(logDir);
            server.writeConfig();
            server.writeZoneFile();
            server.launch();
        } catch (IOException | RuntimeException e) {
            server.close();
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot start knotd " + binary + ": " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
        return server;
    }

    static Path findBinary(Map<String, String> env, Path debian) {
        String fromEnv = env.get(BINARY_ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            Path p = Path.of(fromEnv.strip());
            if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                return p;
            }
            throw new DnsServerNotInstalledException(BINARY_ENV + "=" + fromEnv + " is not an executable file."
                    + " Point it at knotd, or unset it and install Knot DNS with: apt-get install -y knot");
        }
        if (Files.isExecutable(debian)) {
            return debian;
        }
        throw new DnsServerNotInstalledException("Knot DNS is not installed: these tests run a real DNS server"
                + " and found none (looked at $" + BINARY_ENV + " and " + debian + "). Install it with:"
                + " apt-get install -y knot (Debian/Ubuntu; run apt-get update first on a fresh machine)."
                + " ./run-tests installs it when it is missing.");
    }

    /** {@code 127.0.0.1:<port>}: a value for {@code rollcall.discovery.dns.server}. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** The port, UDP and TCP. */
    public int port() {
        return port;
    }

    /** The zone served, e.g. {@code rollcall.test.}. */
    public String zone() {
        return zone.toString();
    }

    /** Where knotd's output goes (appended to across restarts). */
    public Path logFile() {
        return logFile;
    }

    /** Whether the server process is running. */
    public boolean isRunning() {
        return child.isRunning();
    }

    /**
     * Adds one record, e.g. {@code add("w1.rollcall.test.", "A", 5, "127.0.0.1")} or
     * {@code add("_grpc._tcp.rollcall.test.", "SRV", 5, "10 60 7001 w1.rollcall.test.")}. A record
     * with the same name, type and data gets the new TTL, as do its siblings (a record set has one TTL).
     */
    public void add(String name, String type, long ttlSeconds, String data) {
        Update u = new Update(zone);
        u.add(record(name, type, ttlSeconds, data));
        send(u, "add " + name + " " + ttlSeconds + " " + type + " " + data);
    }

    /** Replaces every record of {@code name} and {@code type} with the given data (none: deletes them). */
    public void replace(String name, String type, long ttlSeconds, List<String> data) {
        Update u = new Update(zone);
        u.delete(name(name), Type.value(type));
        for (String d : data) {
            u.add(record(name, type, ttlSeconds, d));
        }
        send(u, "replace " + name + " " + type + " with " + data);
    }

    /** Deletes one record of {@code name} and {@code type} with that data. */
    public void delete(String name, String type, String data) {
        Update u = new Update(zone);
        u.delete(record(name, type, 0, data));
        send(u, "delete " + name + " " + type + " " + data);
    }

    /** Deletes every record of {@code name} and {@code type}. */
    public void delete(String name, String type) {
        Update u = new Update(zone);
        u.delete(name(name), Type.value(type));
        send(u, "delete " + name + " " + type);
    }

    /**
     * Makes the zone answer SERVFAIL to every question, as a server does whose zone failed to
     * load: Knot purges it (its records and journal are gone). {@link #restoreZone()} undoes it.
     */
    public synchronized void failZone() {
        knotc("zone-purge", "-f", zone.toString());
        zoneFailed = true;
    }

    /** Loads the zone again after {@link #failZone()}: SOA and NS only; add the records anew. */
    public synchronized void restoreZone() {
        try {
            writeZoneFile();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        knotc("reload");
        awaitAnswering(true);
        zoneFailed = false;
    }

    /** Stops the server (SIGTERM), keeping its records and port for {@link #restart()}. Idempotent. */
    public void stop() {
        child.stop();
    }

    /**
     * Starts the server again on the same port with the records it had (or still failing, after
     * {@link #failZone()}), and waits until it answers.
     */
    public synchronized void restart() {
        if (child.isClosed()) {
            throw new IllegalStateException("knotd " + address() + " is closed");
        }
        stop();
        try {
            launch();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restart knotd " + knotd + ": " + e.getMessage(), e);
        }
    }

    /** Kills the server and deletes its directory; the log file stays. Idempotent. */
    @Override
    public void close() {
        child.close();
    }

    @Override
    public String toString() {
        return "DnsServer[" + address() + ", zone " + zone + (isRunning() ? "" : ", stopped") + "]";
    }

    // ---- internals ---------------------------------------------------------------------------

    private void writeConfig() throws IOException {
        String dir = home.toString();
        // Journal on, zone file never rewritten: updates survive restarts through the journal.
        String conf = String.join("\n",
                "server:",
                "    rundir: \"" + dir + "\"",
                "    listen: 127.0.0.1@" + port,
                "    background-workers: 1",
                "    udp-workers: 1",
                "    tcp-workers: 1",
                "log:",
                "  - target: stderr",
                "    any: info",
                "database:",
                "    storage: \"" + dir + "\"",
                "acl:",
                "  - id: loopback_update",
                "    address: 127.0.0.0/8",
                "    action: update",
                "template:",
                "  - id: default",
                "    storage: \"" + dir + "\"",
                "    zonefile-sync: -1",
                "    journal-content: changes",
                "zone:",
                "  - domain: " + zone,
                "    file: \"zone.db\"",
                "    acl: loopback_update",
                "");
        Files.writeString(home.resolve("knot.conf"), conf, StandardCharsets.UTF_8);
    }

    private void writeZoneFile() throws IOException {
        // SOA minimum (negative-caching TTL) of 1 s: "no such record" answers are not cached long.
        String z = String.join("\n",
                "$ORIGIN " + zone,
                "$TTL 5",
                "@ SOA ns admin " + (System.currentTimeMillis() / 1000) + " 3600 600 86400 1",
                "@ NS ns",
                "ns A 127.0.0.1",
                "");
        Files.writeString(home.resolve("zone.db"), z, StandardCharsets.UTF_8);
    }

    private synchronized void launch() throws IOException {
        ProcessBuilder pb = new ProcessBuilder(knotd.toString(), "-c", home.resolve("knot.conf").toString())
                .directory(home.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        child.started(pb.start());
        awaitAnswering(!zoneFailed); // a zone failed with failZone() stays failed across a restart
    }

    /** Waits until the server answers about the zone: with its SOA ({@code loaded}), or with anything. */
    private void awaitAnswering(boolean loaded) {
        long deadline = System.nanoTime() + READY_WITHIN.toNanos();
        SimpleResolver r = resolver();
        r.setTimeout(Duration.ofMillis(200));
        while (System.nanoTime() < deadline) {
            Process p = child.current();
            if (p != null && !p.isAlive()) {
                throw new IllegalStateException("knotd exited with " + p.exitValue() + "; its log " + logFile
                        + " ends:\n" + tail());
            }
            try {
                Message m = r.send(Message.newQuery(Record.newRecord(zone, Type.SOA, DClass.IN)));
                if (!loaded || (m.getRcode() == Rcode.NOERROR && !m.getSection(org.xbill.DNS.Section.ANSWER).isEmpty())) {
                    return;
                }
            } catch (IOException notYet) {
                // starting
            }
            try {
                Thread.sleep(50); // polling a process that has no readiness signal
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for knotd", e);
            }
        }
        throw new IllegalStateException("knotd did not answer for " + zone + " on " + address() + " within "
                + READY_WITHIN.toSeconds() + " s; its log " + logFile + " ends:\n" + tail());
    }

    private void send(Update update, String what) {
        SimpleResolver r = resolver();
        r.setTCP(true);
        r.setTimeout(UPDATE_TIMEOUT);
        Message response;
        try {
            response = r.send(update);
        } catch (IOException e) {
            throw new UncheckedIOException("DNS update (" + what + ") to " + address() + " got no answer", e);
        }
        if (response.getRcode() != Rcode.NOERROR) {
            throw new IllegalStateException("DNS update (" + what + ") to " + address() + " was refused: "
                    + Rcode.string(response.getRcode()));
        }
    }

    private void knotc(String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of(knotc.toString(), "-s",
                home.resolve("knot.sock").toString(), "-t", "10"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + knotc, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", cmd), e);
        }
    }

    private SimpleResolver resolver() {
        return new SimpleResolver(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    private static Record record(String name, String type, long ttl, String data) {
        try {
            return Record.fromString(name(name), Type.value(type), DClass.IN, ttl, data, Name.root);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a " + type + " record: " + data + " (" + e.getMessage() + ")", e);
        }
    }

    private static Name name(String text) {
        try {
            return Name.fromString(text.endsWith(".") ? text : text + ".");
        } catch (TextParseException e) {
            throw new IllegalArgumentException("not a DNS name: " + text, e);
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** A port free for both UDP and TCP on loopback, below the ephemeral range so restarts can rebind it. */
    private static int freePort() {
        InetAddress lo = InetAddress.getLoopbackAddress();
        for (int attempt = 0; attempt < 200; attempt++) {
            int p = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            try (ServerSocket tcp = new ServerSocket()) {
                tcp.setReuseAddress(true);
                tcp.bind(new InetSocketAddress(lo, p), 1);
                try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(lo, p))) {
                    return udp.getLocalPort();
                }
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IllegalStateException("no loopback port free for both UDP and TCP after 200 tries");
    }

    /** No Knot DNS here; the message says how to install it. */
    public static final class DnsServerNotInstalledException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        DnsServerNotInstalledException(String message) {
            super(message);
        }
    }
}
