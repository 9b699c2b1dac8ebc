package dev.rollcall.distribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.rollcall.local.WorkerFleet;
import dev.rollcall.protocol.v1.FleetServiceGrpc;
import dev.rollcall.protocol.v1.FleetSnapshot;
import dev.rollcall.protocol.v1.FleetWorker;
import dev.rollcall.protocol.v1.GetFleetRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built {@code rollcall-VERSION.tar.gz}, unpacked as a user unpacks it, runs with nothing but a
 * Java 17: {@code JAVA_HOME} a JDK 17, {@code PATH} {@code /usr/bin:/bin} (no Maven), {@code HOME} an
 * empty directory (no {@code ~/.m2}), no checkout on the class path. {@code bin/rollcall serve} is a
 * real process serving real loopback workers, stopped with SIGTERM.
 */
class TarballOnJava17Test {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern GRPC = Pattern.compile("^fleet api grpc://127\\.0\\.0\\.1:(\\d+)$");
    private static final Pattern HTTP = Pattern.compile(
            "^http (http://127\\.0\\.0\\.1:\\d+) \\(/readyz /healthz /metrics, console\\)$");

    @TempDir
    static Path unpacked;
    @TempDir
    static Path emptyHome;
    private static Path launcher;
    private static Path java17;

    @BeforeAll
    static void unpackTheTarball() throws Exception {
        Path tarball = Path.of(System.getProperty("distribution.tarball", "target/rollcall-"
                + System.getProperty("build.version") + ".tar.gz"));
        assertThat(tarball).as("the tarball ./mvnw package builds").isRegularFile();
        Process tar = new ProcessBuilder("tar", "-xzf", tarball.toAbsolutePath().toString(), "-C", unpacked.toString())
                .redirectErrorStream(true).start();
        String output = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor()).as(output).isZero();
        Path home = unpacked.resolve("rollcall-" + System.getProperty("build.version"));
        launcher = home.resolve("bin/rollcall");
        assertThat(Files.isExecutable(launcher)).as(launcher + " is executable").isTrue();
        try (Stream<Path> jars = Files.list(home.resolve("lib"))) {
            assertThat(jars.map(p -> p.getFileName().toString())).contains(
                    "rollcall-cli-" + System.getProperty("build.version") + ".jar",
                    "rollcall-server-" + System.getProperty("build.version") + ".jar",
                    "rollcall-discovery-k8s-" + System.getProperty("build.version") + ".jar",
                    "slf4j-simple-2.0.18.jar");
        }
        java17 = jdk17().orElseThrow(() -> new AssertionError(
                "no JDK 17 here: the test JVM is not one and /usr/lib/jvm has none; set -Ddistribution.java17.home"));
    }

    /** The test's own JVM when it is a 17, else the first JDK 17 in /usr/lib/jvm. */
    private static Optional<Path> jdk17() throws IOException {
        String given = System.getProperty("distribution.java17.home");
        if (given != null) {
            return Optional.of(Path.of(given));
        }
        if (System.getProperty("java.specification.version").equals("17")) {
            return Optional.of(Path.of(System.getProperty("java.home")));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.sorted().filter(h -> Files.isExecutable(h.resolve("bin/java"))).filter(h -> {
                try {
                    return Files.readString(h.resolve("release")).contains("JAVA_VERSION=\"17");
                } catch (IOException e) {
                    return false;
                }
            }).findFirst();
        }
    }

    /** {@code bin/rollcall args} with only {@code javaHome}, a bare PATH and an empty HOME. */
    private static ProcessBuilder rollcall(Path javaHome, String... args) {
        ProcessBuilder pb = new ProcessBuilder(Stream.concat(Stream.of(launcher.toString()), Stream.of(args)).toList());
        Map<String, String> env = pb.environment();
        env.clear();
        env.put("PATH", "/usr/bin:/bin");
        env.put("HOME", emptyHome.toString());
        env.put("JAVA_HOME", javaHome.toString());
        return pb.directory(emptyHome.toFile());
    }

    private static String run(ProcessBuilder pb, int[] exit) throws Exception {
        Process process = pb.redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();
        exit[0] = process.exitValue();
        return output;
    }

    @Test
    void versionRunsOnJava17() throws Exception {
        int[] exit = new int[1];
        String output = run(rollcall(java17, "--version"), exit);

        assertThat(exit[0]).as(output).isZero();
        assertThat(output).contains("rollcall " + System.getProperty("build.version"), "Java 17.");
    }

    @Test
    void aJavaOlderThan17IsRefusedNamingItsVersion(@TempDir Path oldJdk) throws Exception {
        // A java that reports what a Java 11 reports, so that no old JDK need be installed.
        Path java = Files.createDirectories(oldJdk.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho '    java.specification.version = 11' >&2\n");
        assertThat(java.toFile().setExecutable(true)).isTrue();
        int[] exit = new int[1];

        String output = run(rollcall(oldJdk, "--version"), exit);

        assertThat(exit[0]).as(output).isEqualTo(2);
        assertThat(output).contains("Java 17 or newer is needed", java + " is Java 11");
    }

    @Test
    void aMissingConfigurationFileNamedByTheEnvironmentExitsTwoNamingItWithoutAStackTrace() throws Exception {
        // As a systemd unit or a pod names the file: ROLLCALL_CONFIG, no --config.
        Path missing = emptyHome.resolve("no-such-rollcall.properties");
        ProcessBuilder serve = rollcall(java17, "serve");
        serve.environment().put("ROLLCALL_CONFIG", missing.toString());
        int[] exit = new int[1];

        String output = run(serve, exit);

        assertThat(exit[0]).as(output).isEqualTo(2);
        assertThat(output).contains("rollcall serve: ROLLCALL_CONFIG='" + missing + "': no such file");
        assertThat(output).doesNotContain("\tat ", "Exception");
    }

    @Test
    void serveRunsOnJava17AloneServesTheFleetAndExitsZeroOnSigterm(@TempDir Path dir) throws Exception {
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.1", "2.0.0")) {
            Path config = dir.resolve("rollcall.properties");
            Files.write(config, List.of("rollcall.discovery.type=static",
                    "rollcall.discovery.static.endpoints=" + fleet.endpointList(),
                    "rollcall.policy.type=semver", "rollcall.policy.semver.range=^1.4",
                    "rollcall.serve.port=0", "rollcall.serve.http-port=0"), StandardCharsets.UTF_8);
            Path stderr = dir.resolve("stderr.txt");
            Process serve = rollcall(java17, "serve", "--config", config.toString())
                    .redirectError(stderr.toFile()).start();
            List<String> lines = new CopyOnWriteArrayList<>();
            Thread reader = new Thread(() -> readLines(serve, lines), "serve-stdout");
            reader.start();
            ManagedChannel channel = null;
            try {
                await().atMost(WAIT).until(() -> lines.stream().anyMatch(l -> HTTP.matcher(l).matches()) || !serve.isAlive());
                String transcript = lines + " / stderr: " + Files.readString(stderr);
                Matcher grpc = lines.stream().map(GRPC::matcher).filter(Matcher::matches).findFirst()
                        .orElseThrow(() -> new AssertionError(transcript));
                Matcher http = lines.stream().map(HTTP::matcher).filter(Matcher::matches).findFirst()
                        .orElseThrow(() -> new AssertionError(transcript));
                // The launcher execs the JDK 17's java: the process is that JVM, not a shell around it.
                assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(serve.pid()), "exe")).toRealPath())
                        .isEqualTo(java17.resolve("bin/java").toRealPath());

                channel = ManagedChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(grpc.group(1)))
                        .usePlaintext().build();
                FleetServiceGrpc.FleetServiceBlockingStub fleetApi = FleetServiceGrpc.newBlockingStub(channel);
                await().atMost(WAIT).until(() -> fleetApi.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .getFleet(GetFleetRequest.getDefaultInstance()).getWorkersCount() == 2);
                FleetSnapshot snapshot = fleetApi.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .getFleet(GetFleetRequest.getDefaultInstance());
                assertThat(snapshot.getWorkersList()).extracting(FleetWorker::getVersion)
                        .containsExactlyInAnyOrder("1.4.0", "1.4.1");
                assertThat(snapshot.getExcludedList()).extracting(FleetWorker::getVersion).containsExactly("2.0.0");

                HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                HttpRequest readyz = HttpRequest.newBuilder(URI.create(http.group(1) + "/readyz"))
                        .timeout(Duration.ofSeconds(10)).build();
                await().atMost(WAIT).until(() -> client.send(readyz, HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200);
            } finally {
                if (channel != null) {
                    channel.shutdownNow();
                }
                serve.destroy(); // SIGTERM
            }
            boolean exited = serve.waitFor(30, TimeUnit.SECONDS);
            if (!exited) {
                serve.destroyForcibly();
            }
            reader.join(TimeUnit.SECONDS.toMillis(10));
            String stderrText = Files.readString(stderr);
            assertThat(exited).as("stopped within 30 s of SIGTERM; stderr: " + stderrText).isTrue();
            assertThat(serve.exitValue()).as(stderrText).isZero();
        }
    }

    private static void readLines(Process process, List<String> lines) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lines.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
