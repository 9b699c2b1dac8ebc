package dev.rollcall.cli;

import dev.rollcall.local.FleetWorker;
import dev.rollcall.local.WorkerFleet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Not a test: the small fleet that the {@code rollcall workers} and {@code rollcall probe} output in
 * docs/cli.md was captured against. Starts real loopback workers (1.4.0 ×4, 2.0.0, and one stopped
 * 1.4.0), writes {@code DIR/workers.txt} and {@code DIR/rollcall.properties} (static discovery from
 * the watched file, {@code semver ^1.4}), prints the endpoints, then follows commands on stdin until
 * {@code quit} or end of input: {@code restart I VERSION} restarts worker I in place.
 *
 * <pre>{@code
 * ./mvnw -q -pl cli test-compile
 * java --add-opens=java.base/java.nio=ALL-UNNAMED \
 *      -cp "cli/target/test-classes:cli/target/rollcall.jar:cli/target/lib/*" dev.rollcall.cli.ReadmeFleet /tmp/fleet
 * }</pre>
 */
final class ReadmeFleet {

    private ReadmeFleet() {
    }

    public static void main(String[] args) throws IOException {
        LoggingOptions.configureDefaults();
        Path dir = Files.createDirectories(Path.of(args.length > 0 ? args[0] : "fleet"));
        try (WorkerFleet fleet = WorkerFleet.start("1.4.0", "1.4.0", "1.4.0", "1.4.0", "2.0.0", "1.4.0")) {
            fleet.worker(5).stop();
            Files.write(dir.resolve("workers.txt"),
                    fleet.endpoints().stream().map(e -> e.url()).toList(), StandardCharsets.UTF_8);
            Files.write(dir.resolve("rollcall.properties"), List.of(
                    "rollcall.discovery.type=static",
                    "rollcall.discovery.static.file=" + dir.toAbsolutePath().resolve("workers.txt"),
                    "rollcall.policy.type=semver",
                    "rollcall.policy.semver.range=^1.4"), StandardCharsets.UTF_8);
            for (FleetWorker w : fleet.workers()) {
                System.out.println(w);
            }
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.strip().equals("quit"); line = in.readLine()) {
                String[] words = line.strip().split("\\s+");
                if (words.length == 3 && words[0].equals("restart")) {
                    FleetWorker w = fleet.worker(Integer.parseInt(words[1]));
                    w.restart(words[2]);
                    System.out.println("restarted " + w);
                } else if (!line.isBlank()) {
                    System.out.println("unknown command: " + line);
                }
                System.out.flush();
            }
        }
    }
}
