package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * The servers JVM: {@code ServerFleetMain <count> <firstPort> <lastPort> <version> [flight]}
 * starts {@code count} {@link LoopbackServers} (with Arrow Flight when asked), prints
 * {@code PORTS p1,p2,...} on one line, then answers commands on standard input: {@code answered}
 * prints the number of probes answered so far. It stops when standard input reaches its end (the
 * harness closed it, or died), so that no server outlives the run.
 */
public final class ServerFleetMain {

    private ServerFleetMain() {
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        int firstPort = Integer.parseInt(args[1]);
        int lastPort = Integer.parseInt(args[2]);
        String version = args[3];
        boolean flight = args.length > 4 && args[4].equals("flight");
        try (LoopbackServers servers = LoopbackServers.start(count, firstPort, lastPort, version, flight)) {
            System.out.println("PORTS " + servers.endpoints().stream().map(WorkerEndpoint::port).map(String::valueOf)
                    .collect(Collectors.joining(",")));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("answered")) {
                    System.out.println("ANSWERED " + servers.probesAnswered());
                    System.out.flush();
                } else if (line.equals("gc")) {
                    // The harness's settle(): a timed phase starts with this JVM's young generation empty.
                    long start = System.nanoTime();
                    System.gc();
                    System.out.println("COLLECTED " + (System.nanoTime() - start) / 1_000_000);
                    System.out.flush();
                } else if (line.equals("quit")) {
                    break;
                }
            }
        }
        // Event loop threads are daemons, but grpc may hold non-daemon timers: leave for sure.
        System.exit(0);
    }
}
