package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The baseline side of scenario 14's "N coordinators" rows ({@link FleetService}): {@code
 * EmbeddedCoordinatorsMain <file of worker URLs> <coordinators> <workers>} is {@code coordinators}
 * coordinators in one JVM, each embedding its own resolver (policy {@code ^1.0.0},
 * {@code keepProbeChannels(false)} and {@code fetchSchemas(false)} as the service's resolver in that
 * comparison (the workers serve no reflection: every connection the workers count is a probe's), a push
 * discovery of the first {@code workers} URLs). On {@code go} it starts them one after another, each once
 * the one before lists every worker as compatible (all stay open), and answers {@code RESULT cpu=<ns>
 * nanos=<ns> probes=<n> failed=<n>}: this process's CPU time and the time taken meanwhile, the probes the
 * resolvers sent and, of those, how many failed (timed out, refused: each retried). Closes them at the end
 * of its input.
 */
public final class EmbeddedCoordinatorsMain {

    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    private EmbeddedCoordinatorsMain() {
    }

    public static void main(String[] args) throws Exception {
        List<WorkerEndpoint> fleet = Files.readAllLines(Path.of(args[0])).stream().map(WorkerEndpoint::parse)
                .limit(Integer.parseInt(args[2])).toList();
        int coordinators = Integer.parseInt(args[1]);
        List<WorkerResolver> resolvers = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            System.out.println("READY");
            System.out.flush();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (!line.equals("go")) {
                    throw new IllegalArgumentException("unknown command " + line);
                }
                long cpu = Convergence.processCpu();
                long t0 = System.nanoTime();
                // One after another, each converged before the next starts: on two shared cores, a hundred
                // starting at once time out each other's probes, which coordinators on machines of their
                // own would not.
                for (int c = 0; c < coordinators; c++) {
                    PushDiscovery discovery = new PushDiscovery("push[coordinator-" + c + "]");
                    discovery.push(fleet);
                    WorkerResolver r = WorkerResolver.builder().name("embedded-" + c).discovery(discovery)
                            .policy(SemverRangePolicy.of("^1.0.0")).keepProbeChannels(false)
                            .fetchSchemas(false).maxCandidates(fleet.size()).build();
                    resolvers.add(r);
                    r.await(s -> s.counts().compatible() == fleet.size(), TIMEOUT);
                }
                long nanos = System.nanoTime() - t0;
                long used = Convergence.processCpu() - cpu;
                long probes = resolvers.stream().mapToLong(WorkerResolver::probesSent).sum();
                long failed = resolvers.stream().mapToLong(WorkerResolver::probesFailed).sum();
                System.out.println("RESULT cpu=" + used + " nanos=" + nanos + " probes=" + probes + " failed=" + failed);
                System.out.flush();
            }
        } finally {
            resolvers.forEach(WorkerResolver::close);
        }
        System.exit(0);
    }
}
