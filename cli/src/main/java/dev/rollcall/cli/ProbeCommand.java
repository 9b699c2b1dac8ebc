package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.labels.LabelSelector;
import dev.rollcall.protocol.ProbeOutcome;
import dev.rollcall.core.WorkerProbe;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.rollcall.policy.SemverRangePolicy;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall probe ENDPOINT...}: asks each worker for its {@code WorkerInfo} directly (no
 * discovery) and prints one line per endpoint, in the order given:
 * {@code grpc://10.0.0.7:7001  1.4.0  ok}, {@code ... mismatch: version '2.0.0' is outside ^1.4},
 * {@code ... unreachable: UNAVAILABLE: ...}, then a summary line.
 *
 * <p>Probes run concurrently, at most {@code --concurrency} at a time, each on a fresh connection
 * with the {@code --timeout} deadline (connection included), so the command ends within about
 * {@code ceil(n / concurrency) * timeout}. An endpoint given twice is probed once.
 *
 * <p>TLS ({@code grpcs://} endpoints): the same {@code rollcall.probe.tls.*} keys as the library
 * (CA, client certificate and key, authority), read from the usual configuration chain or
 * {@code --config FILE}; the {@code --tls-*} options win over them. {@code --protocol} (else
 * {@code rollcall.probe.protocol}, else {@code rollcall}) says how a worker is asked. No other key
 * is read but the chosen protocol's own ({@code rollcall.probe.<protocol>.*}).
 *
 * <p>Exit codes, for deployment scripts: 0 when every worker answered (and, with {@code --expect},
 * every version is in the range); 1 when any did not answer or did not match; 2 on a usage error
 * (a malformed endpoint, range or duration), with a message naming the argument or option.
 */
@Command(name = "probe",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        sortOptions = false,
        description = {
            "Asks each worker for its version directly (rollcall.v1.WorkerService/WorkerInfo) and, with --expect,"
                    + " checks it against an npm range. One line per endpoint, in the order given.",
            "Endpoints are grpc://host:port or grpcs://host:port; @FILE reads them from a file"
                    + " (whitespace-separated, # comments)."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:every worker answered (and matched --expect)",
            "1:a worker did not answer, or did not match --expect",
            "2:usage or configuration error (malformed endpoint, range or duration; a bad TLS file)"
        })
public final class ProbeCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @ParentCommand
    private RollcallCommand parent;

    @Mixin
    private LoggingOptions logging;

    /** Parsed in {@link #call}: picocli reports a varargs item its converter refuses as merely "unmatched". */
    @Parameters(arity = "1..*", paramLabel = "ENDPOINT",
            description = "Workers to probe: grpc://host:port or grpcs://host:port.")
    private List<String> endpoints;

    @Option(names = {"-e", "--expect"}, paramLabel = "RANGE", converter = Converters.Range.class,
            description = "An npm version range every worker must be in: ^1.4, ~1.4.2, >=1.2 <2, 1.x, 1.4.0.")
    private SemverRangePolicy expect;

    @Option(names = {"-s", "--selector"}, paramLabel = "SELECTOR", converter = Converters.Selector.class,
            description = "A label selector every worker's own labels must match, in Kubernetes' syntax: "
                    + "env=prod,tier!=canary,zone in (eu-1,eu-2),!deprecated.")
    private LabelSelector selector;

    @Option(names = "--protocol", paramLabel = "NAME",
            description = "How each worker is asked: rollcall, datafusion-distributed, grpc-health, none, or one of a"
                    + " jar on the class path (default: rollcall.probe.protocol, else rollcall). grpc-health and none"
                    + " take the version from discovery's rollcall.version label, which an endpoint given here lacks.")
    private String protocol;

    @Option(names = {"-t", "--timeout"}, paramLabel = "DURATION", defaultValue = "2s",
            converter = Converters.PositiveDuration.class,
            description = "Deadline of each probe, connection included (default: ${DEFAULT-VALUE}).")
    private Duration timeout;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "64",
            description = "Probes in flight at most (default: ${DEFAULT-VALUE}).")
    private int concurrency;

    @Option(names = "--progress",
            description = "Report progress on stderr even when it is not a terminal.")
    private boolean progress;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "A rollcall.properties file whose rollcall.probe.tls.* keys apply; stands for"
                    + " -Drollcall.config=FILE.")
    private Path config;

    @Option(names = "--tls-ca", paramLabel = "FILE",
            description = "PEM CA certificate(s) that grpcs:// workers must chain to (default: rollcall.probe.tls.ca,"
                    + " else the JDK's trust store).")
    private Path tlsCa;

    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "PEM client certificate for workers that require one (mutual TLS); needs --tls-key.")
    private Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE",
            description = "PEM PKCS#8 private key of --tls-cert.")
    private Path tlsKey;

    @Option(names = "--tls-authority", paramLabel = "NAME",
            description = "The name workers' certificates are checked against instead of each endpoint's host.")
    private String tlsAuthority;

    /** For picocli. */
    public ProbeCommand() {
    }

    /** What one endpoint said, or why it did not. */
    private record Outcome(int index, ProbeOutcome outcome) {
    }

    @Override
    public Integer call() {
        logging.apply();
        if (concurrency < 1) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--concurrency': " + concurrency + " is below 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<WorkerEndpoint> targets = parseEndpoints();
        WorkerProbe client;
        try {
            WorkerProbe.Builder builder = WorkerProbe.builder().config(loadConfig());
            if (tlsCa != null) {
                builder.trust(tlsCa);
            }
            if (tlsCert != null || tlsKey != null) {
                if (tlsCert == null || tlsKey == null) {
                    throw new ParameterException(spec.commandLine(),
                            "Options '--tls-cert' and '--tls-key' go together; only one was given");
                }
                builder.clientCertificate(tlsCert, tlsKey);
            }
            if (tlsAuthority != null) {
                builder.authority(tlsAuthority);
            }
            if (protocol != null) {
                builder.protocol(protocol);
            }
            client = builder.build();
        } catch (ConfigurationException e) {
            err.println("rollcall probe: " + e.getMessage());
            err.flush();
            return 2;
        }
        Progress probing = Progress.to(err, progress, RollcallCommand.terminals(parent).stderr());
        Outcome[] outcomes;
        try {
            outcomes = probeAll(client, targets, probing);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("rollcall probe: interrupted");
            return 1;
        } finally {
            probing.close();
        }
        int ok = 0;
        int mismatched = 0;
        int unreachable = 0;
        List<String[]> rows = new ArrayList<>();
        for (Outcome o : outcomes) {
            String url = targets.get(o.index()).url();
            if (o.outcome() instanceof ProbeOutcome.Failed failed) {
                unreachable++;
                rows.add(new String[] {url, "-", "unreachable: " + failed.reason()});
                continue;
            }
            WorkerInfo info = ((ProbeOutcome.Answered) o.outcome()).info();
            String version = info.version().isEmpty() ? WorkerInfo.NO_VERSION : info.version(); // escaped with the row
            Verdict verdict = expect == null ? Verdict.accept() : expect.check(info);
            if (verdict.accepted() && selector != null) {
                verdict = selector.mismatch(info.labels()).map(Verdict::reject).orElse(verdict);
            }
            if (verdict.accepted()) {
                ok++;
                rows.add(new String[] {url, version, "ok"});
            } else {
                mismatched++;
                rows.add(new String[] {url, version, "mismatch: " + verdict.reason()});
            }
        }
        printAligned(out, rows);
        out.println(targets.size() + (targets.size() == 1 ? " worker: " : " workers: ") + ok + " ok, "
                + (expect == null && selector == null ? "" : mismatched + " mismatch, ") + unreachable + " unreachable"
                + (expect == null ? "" : "; expected " + expect.range())
                + (selector == null ? "" : "; selector " + selector));
        out.flush();
        return ok == targets.size() ? 0 : 1;
    }

    /** Every endpoint, each once (by URL), in the order given; every malformed one named in one usage error. */
    private List<WorkerEndpoint> parseEndpoints() {
        Map<String, WorkerEndpoint> unique = new LinkedHashMap<>();
        List<String> malformed = new ArrayList<>();
        for (String text : endpoints) {
            try {
                WorkerEndpoint e = WorkerEndpoint.parse(text);
                unique.putIfAbsent(e.url(), e);
            } catch (IllegalArgumentException e) {
                malformed.add(e.getMessage());
            }
        }
        if (!malformed.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter ENDPOINT: "
                    + String.join("; ", malformed));
        }
        return List.copyOf(unique.values());
    }

    /**
     * Probes every target, at most {@code concurrency} at once. Only this thread starts probes and
     * reports progress; gRPC's threads just hand finished outcomes over, so nothing blocks them.
     */
    private Outcome[] probeAll(WorkerProbe client, List<WorkerEndpoint> targets, Progress probing)
            throws InterruptedException {
        Outcome[] outcomes = new Outcome[targets.size()];
        BlockingQueue<Outcome> finished = new LinkedBlockingQueue<>();
        Deque<Integer> waiting = new ArrayDeque<>();
        for (int i = 0; i < targets.size(); i++) {
            waiting.add(i);
        }
        int inFlight = 0;
        int done = 0;
        while (done < targets.size()) {
            while (inFlight < concurrency && !waiting.isEmpty()) {
                int index = waiting.poll();
                client.probe(targets.get(index), timeout).thenAccept(o -> finished.add(new Outcome(index, o)));
                inFlight++;
            }
            // Every probe has its own deadline, so this wait ends.
            Outcome o = finished.take();
            outcomes[o.index()] = o;
            inFlight--;
            done++;
            probing.update(done, targets.size());
        }
        return outcomes;
    }

    /** As {@code rollcall workers}: the usual chain, with {@code --config} in the place of {@code -Drollcall.config}. */
    private RollcallConfig loadConfig() {
        if (config == null) {
            return RollcallConfig.load();
        }
        if (!Files.isRegularFile(config) || !Files.isReadable(config)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--config': "
                    + config + ": no such readable file (" + config.toAbsolutePath() + ")");
        }
        return RollcallConfig.load(config);
    }

    /** Three columns, the first two padded; every cell as {@link FleetTable#shown} shows a peer's text. */
    private static void printAligned(PrintWriter out, List<String[]> cells) {
        List<String[]> rows = cells.stream().map(r -> new String[] {r[0], FleetTable.shown(r[1]),
                FleetTable.shown(r[2])}).toList();
        int[] widths = new int[2];
        for (String[] row : rows) {
            widths[0] = Math.max(widths[0], row[0].length());
            widths[1] = Math.max(widths[1], row[1].length());
        }
        for (String[] row : rows) {
            out.println(String.format("%-" + widths[0] + "s  %-" + widths[1] + "s  %s", row[0], row[1], row[2]));
        }
    }
}
