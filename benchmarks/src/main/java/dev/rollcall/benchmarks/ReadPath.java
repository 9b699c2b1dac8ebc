package dev.rollcall.benchmarks;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Runs {@link ReadPathBenchmark} with JMH for 1, 2 and 4 reader threads and puts the figures in the report. */
final class ReadPath {

    private ReadPath() {
    }

    static void run(Plan plan, Report report, Path logs) throws Exception {
        for (int threads : new int[] {1, 2, 4}) {
            double rollcall = threads * 1e9 / opsPerSecond(plan, "rollcall", threads, logs);
            double baseline = threads * 1e9 / opsPerSecond(plan, "baseline", threads, logs);
            String target = threads == 4 ? "≤ 20 ns/op and ≥ ×50" : "—";
            String met = threads == 4 ? Report.met(rollcall <= 20 && baseline / rollcall >= 50) : "—";
            report.add(new Report.Row("1. `workers()` with " + threads + " reader" + (threads > 1 ? "s" : "")
                    + ", set churning", perOp(rollcall, threads), perOp(baseline, threads),
                    Report.lessIsBetter(rollcall, baseline), target, met));
        }
        report.note("Read path (1): JMH " + plan.jmhWarmups() + " warm-up and " + plan.jmhIterations() + " measured"
                + " iterations of " + plan.jmhSeconds() + " s, one fork each, mode thrpt: ops/s is the total over the"
                + " readers, ns/op the time one reader spends per call (readers ÷ ops/s; with 4 readers on 2 cores it"
                + " includes the time a reader waits for a core). " + ReadPathBenchmark.FLEET + " real loopback workers; one more"
                + " joins and leaves every " + ReadPathBenchmark.CHURN_MILLIS + " ms (Rollcall probes it and publishes"
                + " a snapshot each time; the baseline's loop sees the list every 5 s). Readers are threads of the same"
                + " 2 cores as the churn, the probes and the servers.");
    }

    /** Calls per second, all readers together. */
    private static double opsPerSecond(Plan plan, String side, int threads, Path logs) throws Exception {
        Options options = new OptionsBuilder()
                .include(ReadPathBenchmark.class.getName() + "\\." + side + "$")
                .threads(threads)
                .forks(1)
                .warmupIterations(plan.jmhWarmups())
                .warmupTime(TimeValue.seconds(plan.jmhSeconds()))
                .measurementIterations(plan.jmhIterations())
                .measurementTime(TimeValue.seconds(plan.jmhSeconds()))
                .jvmArgsAppend(ChildJvm.ARROW_OPENS, "-Xmx1g")
                .output(logs.resolve("jmh-" + side + "-" + threads + "t.log").toString())
                .shouldFailOnError(true)
                .build();
        System.out.println("read path: JMH " + side + ", " + threads + " thread(s)");
        Collection<RunResult> results = new Runner(options).run();
        RunResult result = results.iterator().next();
        return result.getPrimaryResult().getScore();
    }

    private static String perOp(double nanos, int threads) {
        double opsPerSecond = threads * 1e9 / nanos;
        String ops = opsPerSecond >= 1e9 ? String.format(Locale.ROOT, "%.2f G", opsPerSecond / 1e9)
                : opsPerSecond >= 1e6 ? String.format(Locale.ROOT, "%.1f M", opsPerSecond / 1e6)
                : String.format(Locale.ROOT, "%.0f k", opsPerSecond / 1e3);
        return Report.duration(nanos) + "/op, " + ops + " ops/s";
    }
}
