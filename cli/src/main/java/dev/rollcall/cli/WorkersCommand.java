package dev.rollcall.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Requirements;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall workers}: what a coordinator configured like this one would see. It builds a
 * {@link WorkerResolver} from the same configuration as the library, waits until every candidate
 * has a verdict, and prints each candidate (endpoint, version, instance, status and reason) and a
 * summary: the version histogram and the policy. With {@code --watch} it prints again on every new
 * snapshot until interrupted (Ctrl-C), or until {@code --count} snapshots have been printed.
 *
 * <p>Configuration: without {@code --config}, {@link RollcallConfig#load()} (classpath
 * {@code rollcall.properties}, {@code -Drollcall.config} or {@code ROLLCALL_CONFIG}, {@code rollcall.*}
 * system properties, {@code ROLLCALL_*} environment variables). {@code --config FILE} takes the
 * place of {@code -Drollcall.config}: the file's keys still give way to system properties and the
 * environment, exactly as they would for the library.
 *
 * <p>Exit codes: 0 when a settled view was printed (in {@code --watch}, when stopped); 1 when the
 * view did not settle within {@code --wait} (candidates still pending, or discovery failing; what
 * is known is printed anyway); 2 on a usage or configuration error, naming the option or key.
 *
 * <p>With {@code --require}, each snapshot is shown narrowed to those requirements, as a query's
 * lease sees it ({@link FleetSnapshot#requiring}): only the compatible workers that meet them are
 * compatible, every other one shows what it lacks.
 *
 * <p>JSON ({@code --output json}): one object per snapshot, pretty-printed; with {@code --watch},
 * one compact object per line. Its shape is documented in the module's README and is stable: keys
 * may be added, none removed or renamed.
 */
@Command(name = "workers",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        sortOptions = false,
        description = {
            "Shows every candidate worker the configured discovery reports, with its version, instance and"
                    + " status: compatible, rejected (and why) or unreachable (and why), then a summary with the"
                    + " version histogram and the policy.",
            "Reads the same configuration as the library; --config FILE stands for -Drollcall.config=FILE"
                    + " (rollcall.* system properties and ROLLCALL_* environment variables still win)."
        },
        footerHeading = "%nExample configuration (rollcall.properties):%n",
        footer = {
            "  rollcall.discovery.type=static",
            "  rollcall.discovery.static.file=/etc/rollcall/workers.txt",
            "  rollcall.policy.type=semver",
            "  rollcall.policy.semver.range=^1.4.0",
            "",
            "  rollcall workers --config rollcall.properties",
            "  rollcall workers --config rollcall.properties --output json --watch",
            "  rollcall workers --config rollcall.properties --require udf:geo_distance --require 'plan-protocol>=3'",
            "  rollcall workers --config rollcall.properties --classpath my-policy.jar"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:a settled view was printed (with --watch: stopped)",
            "1:not settled within --wait: candidates still pending or discovery failing",
            "2:usage or configuration error"
        })
public final class WorkersCommand implements Callable<Integer> {

    /** Output formats; lower case so that the option reads {@code --output json}. */
    enum Format { table, json }

    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        JSON.getFactory().setCharacterEscapes(new TerminalSafeJson());
    }
    /** {@code "key": value}, one array element per line: the layout people expect from jq and friends. */
    private static final DefaultPrettyPrinter PRETTY = prettyPrinter();
    /** Clears an ANSI terminal and puts the cursor home: how {@code --watch} redraws on a terminal. */
    private static final String CLEAR_SCREEN = "\033[H\033[2J";

    @Spec
    private CommandSpec spec;

    @ParentCommand
    private RollcallCommand parent;

    @Mixin
    private LoggingOptions logging;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "A rollcall.properties file; stands for -Drollcall.config=FILE.")
    private Path config;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "table or json (default: ${DEFAULT-VALUE}).")
    private Format output;

    @Option(names = {"-w", "--watch"}, description = "Print again on every new snapshot, until interrupted.")
    private boolean watch;

    @Option(names = "--count", paramLabel = "N",
            description = "With --watch: stop after printing N snapshots.")
    private Integer count;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "10s",
            converter = Converters.PositiveDuration.class,
            description = "How long to wait for every candidate to have a verdict (default: ${DEFAULT-VALUE}).")
    private Duration wait;

    @Option(names = "--classpath", paramLabel = "PATHS", defaultValue = "${env:ROLLCALL_CLASSPATH}",
            description = "Jars and class directories (separated by ':', ';' on Windows; DIR/* is"
                    + " every jar in DIR) holding your own policies or discovery backends and their dependencies;"
                    + " default: ROLLCALL_CLASSPATH.")
    private String classpath;

    @Option(names = "--protocol", paramLabel = "NAME",
            description = "How workers are asked: rollcall, datafusion-distributed, grpc-health, none, or one of"
                    + " --classpath (default: rollcall.probe.protocol, else rollcall); see docs/probe-protocols.md.")
    private String protocol;

    @Option(names = "--progress",
            description = "Report probing progress on stderr even when it is not a terminal.")
    private boolean progress;

    @Option(names = {"-r", "--require"}, paramLabel = "REQUIREMENT", split = ",",
            description = "Show the fleet as a query that needs this capability sees it: only the compatible workers"
                    + " that have it are compatible, the others show what they lack. A name"
                    + " (udf:geo_distance) or a name and an npm range ('plan-protocol>=3'); repeatable or"
                    + " comma-separated, all must be met.")
    private List<String> require = List.of();

    /** For picocli. */
    public WorkersCommand() {
    }

    @Override
    public Integer call() {
        logging.apply();
        if (count != null && !watch) {
            throw new ParameterException(spec.commandLine(), "--count only applies with --watch");
        }
        if (count != null && count < 1) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--count': " + count + " is below 1");
        }
        Requirements requirements;
        try {
            requirements = Requirements.of(require);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--require': " + e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Terminals terminals = RollcallCommand.terminals(parent);
        WorkerResolver resolver;
        ClassLoader plugins;
        try {
            plugins = PluginClassPath.loader(classpath);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--classpath': "
                    + e.getMessage());
        }
        try {
            WorkerResolver.Builder builder = WorkerResolver.builder().config(loadConfig()).classLoader(plugins).name("cli");
            if (protocol != null && !protocol.isBlank()) {
                builder.probeProtocol(protocol);
            }
            resolver = builder.build();
        } catch (ConfigurationException e) {
            err.println("rollcall workers: " + e.getMessage() + hint(e));
            closePlugins(plugins);
            return 2;
        }
        Progress probing = Progress.to(err, progress, terminals.stderr());
        try (resolver) {
            FleetSnapshot first;
            try {
                first = settle(resolver, probing);
            } finally {
                probing.close();
            }
            boolean settled = settled(first);
            boolean redraw = watch && terminals.stdout() && output == Format.table;
            print(out, first.requiring(requirements), redraw, false);
            if (!watch) {
                if (!settled) {
                    err.println("rollcall workers: " + unsettled(first));
                }
                return settled ? 0 : 1;
            }
            long last = first.number();
            for (int printed = 1; count == null || printed < count; printed++) {
                FleetSnapshot next = next(resolver, last);
                print(out, next.requiring(requirements), redraw, true);
                last = next.number();
            }
            return 0;
        } catch (InterruptedException e) {
            // How a watch is stopped in-process; the resolver is closed by now. Ctrl-C ends the JVM instead.
            Thread.currentThread().interrupt();
            return watch ? 0 : 1;
        } finally {
            out.flush();
            err.flush();
            closePlugins(plugins);
        }
    }

    static void closePlugins(ClassLoader plugins) {
        if (plugins instanceof java.net.URLClassLoader own) {
            try {
                own.close();
            } catch (java.io.IOException e) {
                // Only jar file handles; the command is ending.
            }
        }
    }

    /** Every candidate has a verdict, and the candidates are current. */
    private static boolean settled(FleetSnapshot s) {
        return s.number() > 0 && s.counts().pending() == 0 && s.staleSince().isEmpty();
    }

    /**
     * Waits, at most {@code --wait}, for a settled snapshot and returns it, or else the latest one.
     * Progress is reported between snapshots, on this thread, never while holding the resolver's lock.
     */
    private FleetSnapshot settle(WorkerResolver resolver, Progress probing) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        FleetSnapshot s = resolver.pin();
        while (true) {
            probing.update(s.counts().candidates() - s.counts().pending(), s.counts().candidates());
            long left = deadline - System.nanoTime();
            if (settled(s) || left <= 0) {
                return s;
            }
            try {
                long seen = s.number();
                s = resolver.await(next -> next.number() > seen, Duration.ofNanos(left));
            } catch (TimeoutException e) {
                s = resolver.pin();
            }
        }
    }

    /** Blocks until a snapshot newer than {@code last} is published; nothing polls. */
    private static FleetSnapshot next(WorkerResolver resolver, long last) throws InterruptedException {
        while (true) {
            try {
                return resolver.await(s -> s.number() > last, Duration.ofHours(1));
            } catch (TimeoutException quietHour) {
                // Nothing changed for an hour: keep watching.
            }
        }
    }

    private String unsettled(FleetSnapshot s) {
        String waited = "after " + wait.toString().substring(2).toLowerCase(Locale.ROOT) + ", ";
        if (s.number() == 0) {
            return waited + "discovery has not reported any candidates yet (--wait waits longer)";
        }
        if (s.discoveryProblem().isPresent()) {
            String problem = FleetTable.shown(s.discoveryProblem().get());
            return waited + problem + (problem.startsWith("discovery has not answered") ? ""
                    : "; the table shows the last good set");
        }
        if (s.staleSince().isPresent()) {
            return waited + "discovery has been failing since " + s.staleSince().get()
                    + "; the table shows the last good set";
        }
        return waited + s.counts().pending() + " of " + s.counts().candidates()
                + " candidates still have no verdict (--wait waits longer)";
    }

    private void print(PrintWriter out, FleetSnapshot snapshot, boolean redraw, boolean again) {
        if (output == Format.json) {
            out.println(json(snapshot, !watch));
        } else {
            if (redraw) {
                out.print(CLEAR_SCREEN);
            } else if (again) {
                out.println();
            }
            FleetTable.printWorkers(out, snapshot);
        }
        out.flush();
    }

    /**
     * The JSON form of one snapshot:
     * {@code {"snapshot", "publishedAt", "staleSince", "policy", "selector", "preference", "requirements": [r],
     * "workers": [{"endpoint", "version", "instance", "status", "reason", "holders", "capabilities": [c]}],
     * "summary": {"candidates", "compatible", "rejected", "unreachable", "pending", "lacksRequirement",
     * "versions": {"compatible": {v: n}, "rejected": {v: n}}}}}.
     * Absent values ({@code version} of a worker that never answered, {@code reason} of a compatible
     * one, {@code staleSince} while discovery is healthy, {@code holders} of a worker that is not
     * draining or did not say) are {@code null}; {@code holders} is how many coordinators still hold a
     * draining worker, as the snapshot says ({@link WorkerStatus#holders()}: exact drain; 0 from a
     * worker from before it that sends revisions). {@code requirements} are the ones the snapshot was
     * narrowed to ({@code --require}; empty without), {@code capabilities} what the worker reported
     * ({@code name} or {@code name=version}; empty when none or it never answered).
     */
    static String json(FleetSnapshot snapshot, boolean pretty) {
        ObjectNode root = JSON.createObjectNode();
        root.put("snapshot", snapshot.number());
        root.put("publishedAt", snapshot.publishedAt().toString());
        root.put("staleSince", snapshot.staleSince().map(Object::toString).orElse(null));
        root.put("policy", snapshot.policy());
        root.put("selector", snapshot.selection().selector().isEmpty() ? null : snapshot.selection().selector());
        root.put("preference", snapshot.selection().preference().isEmpty() ? null
                : snapshot.selection().preference());
        var requirements = root.putArray("requirements");
        snapshot.requirements().asList().forEach(r -> requirements.add(r.toString()));
        var workers = root.putArray("workers");
        for (WorkerStatus s : snapshot.statuses()) {
            ObjectNode w = workers.addObject();
            w.put("endpoint", s.endpoint().url());
            w.put("version", s.info().map(i -> i.version()).orElse(null));
            w.put("instance", s.info().map(i -> i.instanceId()).filter(id -> !id.isEmpty()).orElse(null));
            w.put("status", s.state().name().toLowerCase(Locale.ROOT));
            w.put("reason", s.reason().isEmpty() ? null : s.reason());
            if (s.holders().isPresent()) {
                w.put("holders", s.holders().getAsInt());
            } else {
                w.putNull("holders");
            }
            var capabilities = w.putArray("capabilities");
            s.info().ifPresent(i -> i.capabilities().asList().forEach(c -> capabilities.add(c.toString())));
        }
        var counts = snapshot.counts();
        ObjectNode summary = root.putObject("summary");
        summary.put("candidates", counts.candidates());
        summary.put("compatible", counts.compatible());
        summary.put("rejected", counts.rejected());
        summary.put("unreachable", counts.unreachable());
        summary.put("pending", counts.pending());
        summary.put("lacksRequirement", counts.lacksRequirement());
        ObjectNode versions = summary.putObject("versions");
        histogram(versions.putObject("compatible"), FleetTable.versionsIn(snapshot, State.COMPATIBLE));
        histogram(versions.putObject("rejected"), FleetTable.versionsIn(snapshot, State.REJECTED));
        try {
            return pretty ? JSON.writer(PRETTY).writeValueAsString(root) : JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("cannot write a snapshot as JSON", e);
        }
    }

    /**
     * JSON escapes only what JSON must (C0 controls, quote, backslash); a terminal also acts on DEL,
     * C1 controls (U+009B is a CSI) and bidirectional overrides. Those are written {@code \\uXXXX} too,
     * as {@link PeerText} escapes them in the table: the same text, safe to {@code cat}.
     */
    private static final class TerminalSafeJson extends CharacterEscapes {
        private static final long serialVersionUID = 1L;
        private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

        TerminalSafeJson() {
            ascii[0x7f] = CharacterEscapes.ESCAPE_CUSTOM; // by getEscapeSequence, in PeerText's spelling
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return PeerText.isClean(String.valueOf((char) ch)) ? null
                    : new SerializedString(String.format("\\u%04x", ch));
        }
    }

    private static DefaultPrettyPrinter prettyPrinter() {
        DefaultPrettyPrinter p = new DefaultPrettyPrinter().withSeparators(
                Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER));
        p.indentArraysWith(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE);
        return p;
    }

    private static void histogram(ObjectNode node, Map<String, Integer> versions) {
        versions.forEach(node::put);
    }

    /**
     * {@link RollcallConfig#load()}, with {@code --config} in the place of {@code -Drollcall.config}:
     * the file's keys still give way to system properties and the environment.
     */
    private RollcallConfig loadConfig() {
        return loadConfig(spec.commandLine(), config);
    }

    /** {@link RollcallConfig#load()}, or with {@code file} (the {@code --config} option) in the place of {@code -Drollcall.config}. */
    static RollcallConfig loadConfig(picocli.CommandLine commandLine, Path file) {
        if (file == null) {
            return RollcallConfig.load();
        }
        if (!Files.isRegularFile(file)) {
            throw new ParameterException(commandLine, "Invalid value for option '--config': "
                    + file + ": no such file (" + file.toAbsolutePath() + ")");
        }
        if (!Files.isReadable(file)) {
            throw new ParameterException(commandLine, "Invalid value for option '--config': "
                    + file + ": not readable");
        }
        return RollcallConfig.load(file);
    }

    /** When nothing named a configuration file, a missing key most likely means that: say how to give one. */
    private String hint(ConfigurationException e) {
        return hint(e, config);
    }

    /** {@link #hint(ConfigurationException)} for any command with a {@code --config} option. */
    static String hint(ConfigurationException e, Path config) {
        boolean noFile = config == null && System.getProperty(RollcallConfig.CONFIG_PROPERTY) == null
                && System.getenv(RollcallConfig.CONFIG_ENV) == null;
        if (noFile && e.getMessage() != null && e.getMessage().contains(" is not set")) {
            return " (no configuration file was given: use --config FILE, -Drollcall.config=FILE or "
                    + RollcallConfig.CONFIG_ENV + ")";
        }
        return "";
    }
}
