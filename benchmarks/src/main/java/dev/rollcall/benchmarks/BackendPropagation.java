package dev.rollcall.benchmarks;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.testkit.dns.DnsServer;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

/**
 * Scenario 6, propagation through the zookeeper and dns backends: from a write in the backend to
 * the first snapshot that lists the worker (it has a status, whatever its probe says: the URLs are
 * not live workers, since this measures discovery, not probing). Each is set against the backend's
 * own floor in the same run: for ZooKeeper, a bare persistent recursive watch on the same path (no
 * watcher sees a create sooner); for DNS, a bare loop asking the same question at the same interval
 * (DNS has no push: the interval is the floor's order of magnitude, and Rollcall's too).
 */
final class BackendPropagation {

    private static final String PATH = "/rollcall-bench/workers";
    private static final String ZONE = "rollcall-bench.test.";
    private static final String NAME = "workers." + ZONE;
    private static final Duration DNS_INTERVAL = Duration.ofMillis(500);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private BackendPropagation() {
    }

    /** Write times and arrival times, per side; 0 = not yet. */
    private static final class Clocks {
        final long[] written;
        final long[] rollcall;
        final long[] floor;
        /** ZooKeeper only: when a watcher that also reads the created node (as a listing must) has its data. */
        final long[] floorRead;
        final Map<String, Integer> waiting = new ConcurrentHashMap<>();

        Clocks(int n) {
            written = new long[n];
            rollcall = new long[n];
            floor = new long[n];
            floorRead = new long[n];
        }

        /** On Rollcall's listener thread. */
        void snapshot(FleetSnapshot s) {
            long now = System.nanoTime();
            waiting.entrySet().removeIf(e -> {
                if (s.status(e.getKey()).isPresent()) {
                    rollcall[e.getValue()] = now;
                    return true;
                }
                return false;
            });
        }

        synchronized void floorSaw(int i, long now) {
            if (i >= 0 && i < floor.length && floor[i] == 0) {
                floor[i] = now;
            }
        }

        synchronized void floorRead(int i, long now) {
            if (i >= 0 && i < floorRead.length && floorRead[i] == 0) {
                floorRead[i] = now;
            }
        }

        boolean done() {
            if (!waiting.isEmpty()) {
                return false;
            }
            synchronized (this) {
                for (long f : floor) {
                    if (f == 0) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** ZooKeeper: also every floor read is in (DNS has none). */
        synchronized boolean readsDone() {
            for (long f : floorRead) {
                if (f == 0) {
                    return false;
                }
            }
            return true;
        }
    }

    /** 127.0.x.y for write i: distinct addresses, so A records and URLs differ. */
    private static String address(int i) {
        return "127.0." + (1 + i / 250) + "." + (1 + i % 250);
    }

    static void runZooKeeper(Plan plan, Report report) throws Exception {
        int writes = Math.min(plan.writes(), 1_000);
        int warmUp = plan.writesWarmUp();
        int total = warmUp + writes;
        Clocks clocks = new Clocks(total);
        try (ZooKeeperServer zk = ZooKeeperServer.start();
             CuratorFramework client = CuratorFrameworkFactory.newClient(zk.connectString(), 30_000, 10_000,
                     new RetryOneTime(100));
             WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                     "rollcall.discovery.type", "zookeeper",
                     "rollcall.discovery.zookeeper.connect", zk.connectString(),
                     "rollcall.discovery.zookeeper.path", PATH,
                     "rollcall.policy.type", "semver",
                     "rollcall.policy.semver.range", "^1.0.0")))) {
            client.start();
            client.blockUntilConnected();
            client.create().creatingParentsIfNeeded().forPath(PATH);
            resolver.await(s -> s.number() > 0, TIMEOUT);
            resolver.addListener(clocks::snapshot);
            client.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher((Watcher) event -> {
                long now = System.nanoTime();
                String p = event.getPath();
                if (event.getType() == Watcher.Event.EventType.NodeCreated && p != null && p.startsWith(PATH + "/w")) {
                    int i = Integer.parseInt(p.substring(PATH.length() + 2));
                    clocks.floorSaw(i, now);
                    // The event names the node, not its data: a listing needs the URL, so one read more.
                    try {
                        client.getData().inBackground((c, read) -> clocks.floorRead(i, System.nanoTime())).forPath(p);
                    } catch (Exception e) {
                        throw new IllegalStateException("floor: cannot read " + p, e);
                    }
                }
            }).forPath(PATH);

            System.out.println("zookeeper propagation: " + total + " creates, one every 10 ms (" + warmUp
                    + " not counted)");
            long start = System.nanoTime();
            for (int i = 0; i < total; i++) {
                LockSupport.parkNanos(start + i * TimeUnit.MILLISECONDS.toNanos(10) - System.nanoTime());
                String url = "grpc://" + address(i) + ":7001";
                clocks.waiting.put(url, i);
                clocks.written[i] = System.nanoTime();
                client.create().withMode(CreateMode.PERSISTENT).forPath(PATH + "/w" + i, url.getBytes(StandardCharsets.UTF_8));
            }
            await(clocks, "zookeeper");
            org.awaitility.Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).until(clocks::readsDone);
        }
        rows(report, "6. ZooKeeper create → snapshot listing the worker", "a bare recursive watch",
                clocks, warmUp, writes);
        long[] r = Propagation.since(clocks.written, clocks.rollcall, warmUp);
        long[] f = Propagation.since(clocks.written, clocks.floorRead, warmUp);
        long r50 = Latencies.percentile(r, 50);
        long r99 = Latencies.percentile(r, 99);
        long f50 = Latencies.percentile(f, 50);
        long f99 = Latencies.percentile(f, 99);
        report.add(new Report.Row("6. … listing against a bare watch reading each new node's data (the floor: median / p99)",
                String.format(java.util.Locale.ROOT, "×%.2f / ×%.2f the floor", (double) r50 / Math.max(1, f50),
                        (double) r99 / Math.max(1, f99)),
                "—", "floor " + Report.duration(f50) + " / " + Report.duration(f99), "≤ ×1.25", Report.met(
                        r50 <= 1.25 * f50 && r99 <= 1.25 * f99)));
    }

    static void runDns(Plan plan, Report report) throws Exception {
        int writes = Math.min(plan.writes() / 5, 400);
        int warmUp = Math.min(plan.writesWarmUp(), 40);
        int total = warmUp + writes;
        Clocks clocks = new Clocks(total);
        AtomicBoolean stop = new AtomicBoolean();
        try (DnsServer dns = DnsServer.start(ZONE)) {
            dns.add(NAME, "TXT", 0, "\"bench\"");   // the name exists from the start: NOERROR, no A records
            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.of(Map.of(
                    "rollcall.discovery.type", "dns",
                    "rollcall.discovery.dns.name", NAME,
                    "rollcall.discovery.dns.port", "7001",
                    "rollcall.discovery.dns.server", dns.address(),
                    "rollcall.discovery.dns.min-interval", DNS_INTERVAL.toMillis() + "ms",
                    "rollcall.policy.type", "semver",
                    "rollcall.policy.semver.range", "^1.0.0")))) {
                resolver.await(s -> s.number() > 0, TIMEOUT);
                resolver.addListener(clocks::snapshot);
                Thread floor = new Thread(() -> bareReResolve(dns, clocks, stop), "bench-dns-floor");
                floor.setDaemon(true);
                floor.start();

                System.out.println("dns propagation: " + total + " A records added, one every 20 ms (" + warmUp
                        + " not counted); both sides ask every " + DNS_INTERVAL.toMillis() + " ms");
                long start = System.nanoTime();
                for (int i = 0; i < total; i++) {
                    LockSupport.parkNanos(start + i * TimeUnit.MILLISECONDS.toNanos(20) - System.nanoTime());
                    clocks.waiting.put("grpc://" + address(i) + ":7001", i);
                    clocks.written[i] = System.nanoTime();
                    dns.add(NAME, "A", 0, address(i));
                }
                await(clocks, "dns");
                stop.set(true);
                floor.join(5_000);
            }
        }
        rows(report, "6. DNS A record added → snapshot listing the worker (TTL 0, min-interval "
                + DNS_INTERVAL.toMillis() + " ms)", "a dnsjava loop at that interval", clocks, warmUp, writes);
    }

    /** The floor for DNS: the same question, at the same interval, noting each address the first time it is seen. */
    private static void bareReResolve(DnsServer dns, Clocks clocks, AtomicBoolean stop) {
        SimpleResolver r = new SimpleResolver(new InetSocketAddress("127.0.0.1", dns.port()));
        r.setTimeout(Duration.ofSeconds(2));
        Map<String, Integer> index = new ConcurrentHashMap<>();
        for (int i = 0; i < clocks.written.length; i++) {
            index.put(address(i), i);
        }
        while (!stop.get()) {
            long next = System.nanoTime() + DNS_INTERVAL.toNanos();
            try {
                Message m = r.send(Message.newQuery(Record.newRecord(Name.fromString(NAME), Type.A, DClass.IN)));
                long now = System.nanoTime();
                for (Record rec : m.getSection(Section.ANSWER)) {
                    if (rec instanceof ARecord a) {
                        Integer i = index.get(a.getAddress().getHostAddress());
                        if (i != null) {
                            clocks.floorSaw(i, now);
                        }
                    }
                }
            } catch (java.io.IOException e) {
                // the next round asks again
            }
            LockSupport.parkNanos(next - System.nanoTime());
        }
    }

    private static void await(Clocks clocks, String what) {
        try {
            org.awaitility.Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).until(clocks::done);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new IllegalStateException(what + ": writes still unseen after " + TIMEOUT + ": Rollcall "
                    + clocks.waiting.size(), e);
        }
    }

    private static void rows(Report report, String scenario, String floorName, Clocks clocks, int from, int writes) {
        long[] r = Propagation.since(clocks.written, clocks.rollcall, from);
        long[] f = Propagation.since(clocks.written, clocks.floor, from);
        String n = String.format("%,d", writes);
        for (int p : new int[] {50, 99}) {
            long rv = Latencies.percentile(r, p);
            long fv = Latencies.percentile(f, p);
            report.add(new Report.Row(scenario + ", " + (p == 50 ? "median" : "p99") + " of " + n
                    + " (baseline: the floor, " + floorName + ")",
                    Report.duration(rv), Report.duration(fv), Report.lessIsBetter(rv, fv), "—", "—"));
        }
    }
}
