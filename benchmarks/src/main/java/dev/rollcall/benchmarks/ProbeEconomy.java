package dev.rollcall.benchmarks;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.testkit.PushDiscovery;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Scenario 3, probe economy: probes sent per churn event and per minute of steady state, Rollcall
 * and the baseline side by side in one process, on the same fleet: 1,000 live workers and 10
 * candidates that discovery still lists but that are down (nothing listens on their ports), which
 * is what a real fleet looks like between a crash and the next health check. The baseline runs
 * on its real 5 s schedule.
 */
final class ProbeEconomy {

    /** How long a worker that stays down takes to reach the 30 s retry cap, with room for jitter. */
    private static final java.time.Duration BACKOFF_TO_CAP = java.time.Duration.ofSeconds(36);

    private ProbeEconomy() {
    }

    static void run(Plan plan, List<WorkerEndpoint> all, Report report) throws Exception {
        int n = Plan.SMALL;
        int churn = (int) (n * Plan.CHURN);
        List<WorkerEndpoint> live = all.subList(0, n);
        List<WorkerEndpoint> spares = all.subList(n, n + churn);
        PushDiscovery discovery = new PushDiscovery("push[benchmark]");
        try (DownEndpoints down = DownEndpoints.reserve(churn)) {
            run(plan, live, spares, down.endpoints(), discovery, report);
        }
    }

    private static void run(Plan plan, List<WorkerEndpoint> live, List<WorkerEndpoint> spares,
                            List<WorkerEndpoint> dead, PushDiscovery discovery, Report report) throws Exception {
        int n = live.size();
        int churn = spares.size();
        List<WorkerEndpoint> fleet = new ArrayList<>(live);
        fleet.addAll(dead);
        List<WorkerEndpoint> churned = Convergence.churned(live, spares);
        churned.addAll(dead);
        List<String> fresh = spares.stream().map(WorkerEndpoint::url).toList();
        distinct(fleet);
        distinct(churned);

        try (WorkerResolver resolver = WorkerResolver.builder().name("economy").discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0.0")).build();
             HandRolledResolver baseline = new HandRolledResolver(discovery::urls, Convergence.VERSION)) {
            discovery.push(fleet);
            baseline.start(Convergence.PERIOD);
            resolver.await(s -> s.counts().compatible() == n && s.counts().unreachable() == dead.size(),
                    Convergence.TIMEOUT);
            if (!baseline.awaitWorkers(n, Convergence.TIMEOUT)) {
                throw new IllegalStateException("the baseline did not find " + n + " workers");
            }

            // Steady state: the down workers' retries have reached their 30 s cap (250 ms doubling:
            // 0.25 + 0.5 + … + 16 s ≈ 32 s after their first failure, with jitter). A window that
            // starts at convergence counts the early, quick retries: at 8 s that made Rollcall's
            // rate four times the baseline's, a rate no coordinator keeps.
            System.out.println("probe economy: waiting " + BACKOFF_TO_CAP.toSeconds()
                    + " s for the retries of the down workers to reach their cap");
            Thread.sleep(BACKOFF_TO_CAP.toMillis());
            System.out.println("probe economy: counting probes for " + plan.steadySeconds() + " s of steady state");
            long r0 = resolver.probesSent();
            long b0 = baseline.probesSent();
            Thread.sleep(plan.steadySeconds() * 1000L);
            double perMinute = 60.0 / plan.steadySeconds();
            double rSteady = (resolver.probesSent() - r0) * perMinute;
            double bSteady = (baseline.probesSent() - b0) * perMinute;

            long r1 = resolver.probesSent();
            long b1 = baseline.probesSent();
            discovery.push(churned);
            resolver.await(s -> fresh.stream().allMatch(url -> Convergence.compatible(s, url)), Convergence.TIMEOUT);
            long rChurn = resolver.probesSent() - r1;
            if (!baseline.awaitNextPass(Convergence.TIMEOUT.plus(Convergence.PERIOD))
                    || !baseline.workers().containsAll(fresh) && !baseline.awaitNextPass(Convergence.TIMEOUT)) {
                throw new IllegalStateException("the baseline did not pick up the churn");
            }
            long bChurn = baseline.probesSent() - b1;

            report.add(new Report.Row("3. probes per churn event: 10 of 1,000 replaced, 10 candidates down",
                    Report.count(rChurn), Report.count(bChurn), Report.lessIsBetter(rChurn, bChurn),
                    "= 10 (the new URLs only)", Report.met(rChurn == churn)));
            report.add(new Report.Row("3. probes per minute of steady state: 1,000 up, 10 down (measured over "
                    + plan.steadySeconds() + " s)", Report.count(rSteady), Report.count(bSteady),
                    Report.lessIsBetter(rSteady, bSteady), "—", "—"));
            report.note(String.format(Locale.ROOT, "Probe economy (3): in the long run Rollcall retries a worker"
                    + " that is down every 30 s (backoff 250 ms doubling up to 30 s; the window above starts "
                    + BACKOFF_TO_CAP.toSeconds() + " s after convergence, once the retries have reached that cap)"
                    + " and re-probes every worker that answered once per"
                    + " `probe.refresh-interval` (10 min): for this fleet %d + %d = %d probes a minute against the"
                    + " baseline's %d (every down worker each 5 s; it never re-checks a worker that answered, so it"
                    + " never notices one that restarted in place with another version).",
                    dead.size() * 2, n / 10, dead.size() * 2 + n / 10, dead.size() * 12));
        }
    }

    /** A URL listed twice would make the fleet one candidate short, and the wait for its counts endless. */
    private static void distinct(List<WorkerEndpoint> fleet) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (WorkerEndpoint e : fleet) {
            if (!seen.add(e.url())) {
                throw new IllegalStateException("the fleet lists " + e.url() + " twice (a down candidate on a live"
                        + " worker's port?): its counts would never add up");
            }
        }
    }
}
