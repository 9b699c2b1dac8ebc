package dev.rollcall.local.etcd;

import dev.rollcall.local.internal.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real single-member etcd server on loopback: the store behind {@code rollcall demo --discovery
 * etcd}, and for tests, Rollcall's and yours.
 *
 * <pre>{@code
 * try (EtcdServer etcd = EtcdServer.start()) {
 *     String endpoint = etcd.endpoint();      // http://127.0.0.1:<free port>
 *     etcd.stop();                            // etcd is down: watches break, calls fail
 *     etcd.restart();                         // same ports, same data: revisions carry on
 * }
 * }</pre>
 *
 * <p>It runs the {@code etcd} binary named by the environment variable {@value #BINARY_ENV}, or else
 * {@code /usr/bin/etcd} (Debian's {@code etcd-server} package), or else {@code etcd} on the
 * {@code PATH}. When none is there, {@link #start()} throws {@link EtcdNotInstalledException}, whose
 * message says how to install it: a test that needs etcd fails, it never skips silently.
 *
 * <p>The server listens on two free loopback ports (client and peer) with a temporary data
 * directory, and is healthy (it has elected itself leader and answers {@code /health}) when
 * {@link #start()} and {@link #restart()} return. Its output goes to {@link #logFile()}, under
 * {@code target/etcd/} when the working directory has a {@code target} directory (a Maven build),
 * else in the data directory's parent; nothing is printed to the console. Raft's timers are shortened
 * (heartbeat 50 ms, election 500 ms) so that a (re)start takes about half a second.
 *
 * <p>{@link #start(Tls)} starts it serving TLS on its client port ({@code https://}), optionally
 * requiring client certificates ({@code --client-cert-auth}); certificates can come from
 * testkit's {@code TestCertificates}. Its health is then checked on a separate
 * plaintext metrics port.
 *
 * <p>Thread-safe. {@link #close()} kills the server and deletes its data; a JVM shutdown hook does
 * the same if a test run dies before closing it.
 */
public final class EtcdServer implements AutoCloseable {

    /** Environment variable naming the etcd binary to run. */
    public static final String BINARY_ENV = "ROLLCALL_ETCD_BINARY";

    private static final String DEBIAN_BINARY = "/usr/bin/etcd";
    private static final Duration HEALTHY_WITHIN = Duration.ofSeconds(30);
    private static final Duration STOP_WITHIN = Duration.ofSeconds(10);
    private static final AtomicInteger SERVERS = new AtomicInteger();

    /**
     * TLS on the client port: the server's certificate and PKCS#8 key (PEM), and optionally the CA
     * whose client certificates it requires (etcd's {@code --trusted-ca-file} and
     * {@code --client-cert-auth}); null for none.
     */
    public record Tls(Path certificate, Path key, Path clientCa) {
        public Tls {
            java.util.Objects.requireNonNull(certificate, "certificate");
            java.util.Objects.requireNonNull(key, "key");
        }
    }

    private final Path binary;
    private final Tls tls;
    private final int metricsPort;
    private final Path home;
    private final Path logFile;
    private final int clientPort;
    private final int peerPort;
    private final String name;
    private final HttpClient http;
    private final ServerProcess child;

    private EtcdServer(Path binary, Path home, Path logFile, int clientPort, int peerPort, String name, Tls tls,
                       int metricsPort) {
        this.binary = binary;
        this.tls = tls;
        this.metricsPort = metricsPort;
        this.home = home;
        this.logFile = logFile;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.name = name;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        this.child = new ServerProcess(home, "rollcall-etcd-server-cleanup", STOP_WITHIN);
    }

    /**
     * Starts a new etcd on free loopback ports with an empty data directory and waits until it is
     * healthy.
     *
     * @throws EtcdNotInstalledException when no etcd binary is found (the message says how to install one)
     * @throws IllegalStateException     when etcd exits or is not healthy within 30 s (the message
     *                                   quotes the end of its log)
     */
    public static EtcdServer start() {
        return start(null);
    }

    /**
     * As {@link #start()}, serving TLS on the client port as {@code tls} says ({@code null}: plaintext);
     * {@link #endpoint()} is then {@code https://127.0.0.1:<port>}.
     */
    public static EtcdServer start(Tls tls) {
        Path binary = findBinary();
        int n = SERVERS.incrementAndGet();
        Path home;
        try {
            home = Files.createTempDirectory("rollcall-etcd-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for etcd", e);
        }
        int clientPort = freePort();
        int peerPort = freePort();
        while (peerPort == clientPort) {
            peerPort = freePort();
        }
        int metricsPort = tls == null ? -1 : freePort();
        while (tls != null && (metricsPort == clientPort || metricsPort == peerPort)) {
            metricsPort = freePort();
        }
        Path logDir = Files.isDirectory(Path.of("target")) ? Path.of("target", "etcd").toAbsolutePath() : home;
        Path log = logDir.resolve("etcd-" + ProcessHandle.current().pid() + "-" + n + "-" + clientPort + ".log");
        EtcdServer server = new EtcdServer(binary, home, log, clientPort, peerPort, "rollcall-test-" + n, tls,
                metricsPort);
        try {
            Files.createDirectories(logDir);
            server.launch();
        } catch (IOException | RuntimeException e) {
            server.close();
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot start etcd " + binary + ": " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
        return server;
    }

    /**
     * The etcd binary that {@link #start()} would run.
     *
     * @throws EtcdNotInstalledException when there is none
     */
    public static Path findBinary() {
        return findBinary(System.getenv(), Path.of(DEBIAN_BINARY));
    }

    static Path findBinary(Map<String, String> env, Path debian) {
        String fromEnv = env.get(BINARY_ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            Path p = Path.of(fromEnv.strip());
            if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                return p;
            }
            throw new EtcdNotInstalledException(BINARY_ENV + "=" + fromEnv
                    + " is not an executable file. Point it at an etcd binary, or unset it and install etcd"
                    + " with: apt-get install -y etcd-server");
        }
        if (Files.isExecutable(debian)) {
            return debian;
        }
        String path = env.get("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                if (dir.isBlank()) {
                    continue;
                }
                Path p = Path.of(dir, "etcd");
                if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                    return p;
                }
            }
        }
        throw new EtcdNotInstalledException("etcd is not installed: these tests run a real etcd server and found"
                + " none (looked at $" + BINARY_ENV + ", " + debian + " and the PATH). Install it with:"
                + " apt-get install -y etcd-server (Debian/Ubuntu; run apt-get update first on a fresh machine),"
                + " or set " + BINARY_ENV + " to an etcd binary. ./run-tests installs it when it is missing.");
    }

    /** The client URL, e.g. {@code http://127.0.0.1:43791}: a value for {@code rollcall.discovery.etcd.endpoints}. */
    public String endpoint() {
        return (tls == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
    }

    /** Where {@code /health} is answered: the client URL, or the plaintext metrics URL under TLS. */
    private String healthBase() {
        return tls == null ? endpoint() : "http://127.0.0.1:" + metricsPort;
    }

    /** The client port. */
    public int clientPort() {
        return clientPort;
    }

    /** Where etcd's output goes (appended to across restarts). */
    public Path logFile() {
        return logFile;
    }

    /** The data directory (deleted by {@link #close()}). */
    public Path dataDir() {
        return home.resolve("data");
    }

    /** Whether the server process is running. */
    public boolean isRunning() {
        return child.isRunning();
    }

    /**
     * Stops the server gracefully (SIGTERM, then SIGKILL after 10 s), keeping its data and ports for
     * {@link #restart()}. Clients see their connections close. Idempotent.
     */
    public void stop() {
        child.stop();
    }

    /**
     * Starts the server again on the same ports with the same data (stopping it first if it runs),
     * and waits until it is healthy. Keys, leases and revisions survive; leases keep counting down
     * from where they were, as etcd does.
     */
    public synchronized void restart() {
        if (child.isClosed()) {
            throw new IllegalStateException("etcd " + endpoint() + " is closed");
        }
        stop();
        try {
            launch();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restart etcd " + binary + ": " + e.getMessage(), e);
        }
    }

    /** Kills the server and deletes its data directory; the log file stays. Idempotent. */
    @Override
    public void close() {
        child.close();
    }

    @Override
    public String toString() {
        return "EtcdServer[" + endpoint() + (isRunning() ? "" : ", stopped") + "]";
    }

    private synchronized void launch() throws IOException {
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> cmd = new ArrayList<>(List.of(binary.toString(),
                "--name", name,
                "--data-dir", dataDir().toString(),
                "--listen-client-urls", endpoint(),
                "--advertise-client-urls", endpoint(),
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", name + "=" + peer,
                "--initial-cluster-state", "new",
                "--heartbeat-interval", "50",
                "--election-timeout", "500",
                "--logger", "zap",
                "--log-outputs", "stderr"));
        if (tls != null) {
            cmd.addAll(List.of("--cert-file", tls.certificate().toString(), "--key-file", tls.key().toString(),
                    "--listen-metrics-urls", healthBase()));
            if (tls.clientCa() != null) {
                cmd.addAll(List.of("--trusted-ca-file", tls.clientCa().toString(), "--client-cert-auth"));
            }
        }
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        // A proxy setting from the environment must not capture loopback traffic.
        pb.environment().remove("http_proxy");
        pb.environment().remove("https_proxy");
        pb.environment().remove("HTTP_PROXY");
        pb.environment().remove("HTTPS_PROXY");
        pb.environment().remove("ETCDCTL_API");
        Process p = pb.start();
        child.started(p);
        awaitHealthy(p);
    }

    private void awaitHealthy(Process p) {
        long deadline = System.nanoTime() + HEALTHY_WITHIN.toNanos();
        HttpRequest health = HttpRequest.newBuilder(URI.create(healthBase() + "/health"))
                .timeout(Duration.ofSeconds(1)).GET().build();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                child.exited(p);
                throw new IllegalStateException("etcd " + endpoint() + " exited with status " + p.exitValue()
                        + " while starting; its log " + logFile + " ends with:\n" + logTail());
            }
            try {
                HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (r.statusCode() == 200 && r.body().replace(" ", "").contains("\"health\":\"true\"")) {
                    return;
                }
                last = "HTTP " + r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for etcd " + endpoint(), e);
            }
            try {
                // Polling a child process's health endpoint; there is nothing to wait on instead.
                Thread.sleep(25);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for etcd " + endpoint(), e);
            }
        }
        throw new IllegalStateException("etcd " + endpoint() + " was not healthy within " + HEALTHY_WITHIN
                + " (last answer: " + last + "); its log " + logFile + " ends with:\n" + logTail());
    }

    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(cannot read it: " + e.getMessage() + ")";
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        }
    }

    /** No etcd binary was found; the message says how to install one. */
    public static final class EtcdNotInstalledException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        EtcdNotInstalledException(String message) {
            super(message);
        }

        @Override
        public String toString() {
            return getClass().getSimpleName() + ": " + getMessage();
        }
    }
}
