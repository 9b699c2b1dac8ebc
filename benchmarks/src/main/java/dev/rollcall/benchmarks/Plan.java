package dev.rollcall.benchmarks;

/**
 * How big and how long each scenario runs: {@link #QUICK} (under 3 minutes for scenarios 1 to 6) or {@link #FULL}.
 *
 * @param jmhWarmups          JMH warm-up iterations of {@code jmhSeconds} each
 * @param jmhIterations       JMH measured iterations
 * @param jmhSeconds          length of one JMH iteration
 * @param warmUpSeconds       how long the harness JVM converges on 1,000 workers, both ways, before measuring
 * @param repsSmall           measured convergences on 1,000 workers, each way (median reported)
 * @param repsLarge           measured convergences on 10,000 workers, each way
 * @param freshJvms           fresh JVMs started per side for the first-1,000 measurement
 * @param steadySeconds       the steady-state window of the probe-economy scenario
 * @param writes              etcd writes measured in the propagation scenario (after {@code writesWarmUp})
 * @param writesWarmUp        etcd writes before measuring
 */
record Plan(String name, int jmhWarmups, int jmhIterations, int jmhSeconds, int warmUpSeconds, int repsSmall,
            int repsLarge, int freshJvms, int steadySeconds, int writes, int writesWarmUp) {

    static final int SMALL = 1_000;
    static final int LARGE = 10_000;
    /** 1 % of the fleet is replaced in a churn event. */
    static final double CHURN = 0.01;
    /** Churns per convergence run (scenario 2), each bringing workers never seen before. */
    static final int CHURNS = 5;

    static final Plan QUICK = new Plan("quick", 1, 2, 1, 6, 3, 3, 1, 20, 1_000, 100);
    static final Plan FULL = new Plan("full", 5, 5, 2, 45, 10, 6, 3, 60, 2_000, 200);

    /**
     * How long one scenario may run before the harness reports it as hung and goes on: about three
     * times the longest one takes on a quiet machine (2 and 9), so a loaded machine still finishes.
     */
    java.time.Duration scenarioLimit() {
        return java.time.Duration.ofMinutes(name.equals("quick") ? 8 : 25);
    }
}
