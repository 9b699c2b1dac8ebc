package dev.rollcall.console;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.InternalSnapshots;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console under 200 and 10,000 workers: what one update costs the server (building the JSON,
 * its size) and the browser (parsing and rendering, measured in the page with
 * {@code performance.now()} and read back through Selenium), and publish-to-rendered. Synthetic
 * snapshots (the console's cost depends on the snapshot, not on how the resolver made it); each
 * update drains or resumes 1 % of the workers. Prints a Markdown table; asserts nothing. Run as the
 * module README says; not part of the test suite.
 */
public final class ConsoleScale {

    private ConsoleScale() {
    }

    /** A source the measurement drives: {@link #publish} hands a snapshot to every subscriber at once. */
    static final class Feed implements SnapshotSource {
        private final List<Consumer<FleetSnapshot>> listeners = new CopyOnWriteArrayList<>();
        private volatile FleetSnapshot current;

        Feed(FleetSnapshot first) {
            current = first;
        }

        void publish(FleetSnapshot s) {
            current = s;
            listeners.forEach(l -> l.accept(s));
        }

        @Override
        public String name() {
            return "scale";
        }

        @Override
        public String discoveryDescription() {
            return "synthetic";
        }

        @Override
        public FleetSnapshot current() {
            return current;
        }

        @Override
        public AutoCloseable subscribe(Consumer<FleetSnapshot> listener) {
            listeners.add(listener);
            listener.accept(current);
            return () -> listeners.remove(listener);
        }
    }

    public static void main(String[] args) throws Exception {
        int updates = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        List<String> rows = new ArrayList<>();
        try (HeadlessChromium chromium = new HeadlessChromium(1400, 1000)) {
            for (int workers : new int[] {200, 10_000}) {
                rows.add(measure(chromium, workers, updates));
            }
        }
        System.out.println();
        System.out.println("| workers | JSON build per update, median / p95 | document | browser parse, median / p95"
                + " | browser render, median / p95 | publish → rendered, median / p95 | first render |");
        System.out.println("|---|---|---|---|---|---|---|");
        rows.forEach(System.out::println);
    }

    private static String measure(HeadlessChromium chromium, int workers, int updates) {
        List<WorkerStatus> statuses = fleet(workers);
        long number = 1;
        FleetSnapshot snapshot = snapshot(number, statuses, null);
        Feed feed = new Feed(snapshot);

        // Server side, on this thread: the sender's work per update (timeline + JSON), warmed first.
        Timeline timeline = new Timeline(ConsoleKeys.TIMELINE.defaultValue());
        FleetJson json = new FleetJson("scale", () -> "synthetic", timeline);
        FleetSnapshot s = snapshot;
        List<WorkerStatus> st = new ArrayList<>(statuses);
        long n = number;
        long warm = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        for (int i = 0; i < 30 || System.nanoTime() < warm; i++) {
            s = snapshot(++n, flip(st, i), s);
            timeline.record(s);
            json.publish(s);
        }
        double[] buildMs = new double[updates];
        long bytes = 0;
        for (int i = 0; i < updates; i++) {
            s = snapshot(++n, flip(st, i), s);
            long t = System.nanoTime();
            timeline.record(s);
            bytes = json.publish(s).json().length;
            buildMs[i] = (System.nanoTime() - t) / 1e6;
        }

        // Browser side: the real console, its event stream, the page in headless Chromium.
        double[] parse = new double[updates];
        double[] render = new double[updates];
        double[] endToEnd = new double[updates];
        double first;
        try (RollcallConsole console = RollcallConsole.builder(feed).start()) {
            var driver = chromium.driver;
            driver.get(console.uri().toString());
            WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(60), Duration.ofMillis(5));
            long firstNumber = number;
            wait.until(d -> ((Number) ((JavascriptExecutor) d).executeScript("return window.rollcallConsole.snapshot")).longValue() >= firstNumber);
            first = ((Number) driver.executeScript(
                    "const r = window.rollcallConsole.renders; return r[r.length - 1].totalMs")).doubleValue();
            List<WorkerStatus> live = new ArrayList<>(statuses);
            FleetSnapshot previous = snapshot;
            for (int i = 0; i < updates + 5; i++) {
                FleetSnapshot next = snapshot(++number, flip(live, i), previous);
                previous = next;
                long published = System.currentTimeMillis();
                feed.publish(next);
                long expect = number;
                wait.until(d -> ((Number) ((JavascriptExecutor) d).executeScript("return window.rollcallConsole.snapshot")).longValue() >= expect);
                if (i < 5) {
                    continue; // the page's own warm-up
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> r = (Map<String, Object>) driver.executeScript(
                        "const r = window.rollcallConsole.renders; return r[r.length - 1]");
                parse[i - 5] = ((Number) r.get("parseMs")).doubleValue();
                render[i - 5] = ((Number) r.get("renderMs")).doubleValue();
                endToEnd[i - 5] = ((Number) r.get("doneAt")).longValue() - published;
            }
        }
        return String.format(Locale.ROOT, "| %,d | %s ms | %,d KB | %s ms | %s ms | %s ms | %.0f ms |", workers,
                medianP95(buildMs), bytes / 1024, medianP95(parse), medianP95(render), medianP95(endToEnd), first);
    }

    /** Drains 1 % of the workers (at least one), or resumes them on odd rounds. */
    private static List<WorkerStatus> flip(List<WorkerStatus> statuses, int round) {
        int count = Math.max(1, statuses.size() / 100);
        int from = (round / 2 * count) % statuses.size();
        for (int k = 0; k < count; k++) {
            int i = (from + k) % statuses.size();
            WorkerStatus w = statuses.get(i);
            if (w.state() == State.COMPATIBLE) {
                statuses.set(i, new WorkerStatus(w.endpoint(), State.DRAINING,
                        "draining: finishing its work in flight, takes no new work", w.info()));
            } else if (w.state() == State.DRAINING) {
                statuses.set(i, new WorkerStatus(w.endpoint(), State.COMPATIBLE, "", w.info()));
            }
        }
        return statuses;
    }

    private static List<WorkerStatus> fleet(int workers) {
        List<WorkerStatus> all = new ArrayList<>(workers);
        for (int i = 0; i < workers; i++) {
            WorkerEndpoint e = new WorkerEndpoint("10." + (i / 62500) + "." + (i / 250 % 250) + "." + (i % 250 + 1),
                    7001, false, Map.of("zone", "eu-" + (i % 3 + 1), "node", "node-" + i));
            String version = i % 10 < 6 ? "1.5.0" : i % 10 < 9 ? "1.4.0" : "2.0.0";
            WorkerInfo info = new WorkerInfo(e, version, "instance-" + i, Map.of("engine", "df-49"), List.of());
            if (version.equals("1.5.0")) {
                all.add(new WorkerStatus(e, State.COMPATIBLE, "", Optional.of(info)));
            } else if (version.equals("1.4.0")) {
                all.add(new WorkerStatus(e, State.REJECTED, "version '1.4.0' is not the chosen cohort 1.5.0 (rollout)",
                        Optional.of(info)));
            } else {
                all.add(new WorkerStatus(e, State.REJECTED, "version '2.0.0' is outside ^1", Optional.of(info)));
            }
        }
        return all;
    }

    private static FleetSnapshot snapshot(long number, List<WorkerStatus> statuses, FleetSnapshot previous) {
        // As the resolver builds them (statuses of the previous snapshot not read again).
        return InternalSnapshots.buildAfter(FleetSnapshot.builder(number).policy("rollout ^1 (min-workers 3)")
                .selection(Optional.of("1.5.0"), "switched to 1.5.0: 60 % of the allowed workers")
                .statuses(List.copyOf(statuses)), previous);
    }

    private static String medianP95(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return String.format(Locale.ROOT, "%.1f / %.1f", v[v.length / 2], v[(int) Math.ceil(v.length * 0.95) - 1]);
    }
}
