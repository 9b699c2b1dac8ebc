package dev.rollcall.cli;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.core.OtlpMetrics;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.worker.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall worker}: a reference worker from the command line, a {@link RollcallWorker} that
 * answers {@code WorkerInfo} and its watch stream with the version and capabilities it was given,
 * serves Arrow Flight (nothing implemented) and, when {@code rollcall.worker.register=true} in the
 * configuration, registers with the backend {@code rollcall.discovery.type} names. Prints one line
 * once it listens: {@code worker grpc://HOST:PORT version=VERSION instance=ID}. With
 * {@code rollcall.metrics.otlp.url} set, it pushes its {@link WorkerMetrics} over OTLP
 * ({@link OtlpMetrics}) every {@code rollcall.metrics.otlp.step}, on a resource naming
 * {@code service.name=rollcall-worker}, {@code service.version} the version given and
 * {@code service.instance.id} the printed instance id; the registry is closed after the worker's
 * orderly stop, so its last export reads the worker drained.
 *
 * <p>Run as the process's command, SIGTERM and SIGINT drain it (watching coordinators see
 * {@code DRAINING} at once), wait as {@link RollcallWorker#close()} does, and exit 0; a shutdown hook
 * closes it on any other way out of the JVM. In-process (tests), interrupting the thread does the
 * same. Exit codes: 0 when stopped; 1 when the port cannot be bound or registration failed; 2 on a
 * usage or configuration error, naming the option or key and its value (escaped).
 */
@Command(name = "worker",
        sortOptions = false,
        description = {
            "Runs a reference worker: answers rollcall.v1.WorkerService (WorkerInfo and its watch stream) with the"
                    + " version and capabilities given, serves Arrow Flight and gRPC reflection on the same port, and"
                    + " drains on SIGTERM or Ctrl-C, then exits 0. For trying a coordinator, rollcall serve or the"
                    + " console against real workers.",
            "Reads the worker's keys of the configuration (rollcall.worker.*; with rollcall.worker.register=true it"
                    + " registers with the backend of rollcall.discovery.type); --config FILE stands for"
                    + " -Drollcall.config=FILE. Prints one line once it listens:"
                    + " worker grpc://HOST:PORT version=VERSION instance=ID.",
            "With rollcall.metrics.otlp.url set, pushes its meters (rollcall.worker.*) over OTLP/HTTP every"
                    + " rollcall.metrics.otlp.step, on a resource naming service.name=rollcall-worker, service.version"
                    + " and service.instance.id (the printed instance id)."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  rollcall worker --version 1.4.0",
            "  rollcall worker --version 1.4.0 --port 7001 --capability udf:geo_distance",
            "  rollcall worker --version 1.5.0 --capability plan-protocol=3 --config worker.properties"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped (SIGTERM, Ctrl-C)",
            "1:the port cannot be bound, or registration failed",
            "2:usage or configuration error"
        })
public final class WorkerCommand implements Callable<Integer> {

    /** {@code service.name} on the OTLP resource of its meters. */
    static final String SERVICE_NAME = "rollcall-worker";

    @Spec
    private CommandSpec spec;

    @ParentCommand
    private RollcallCommand parent;

    @Mixin
    private LoggingOptions logging;

    // Not picocli's standard options: their --version would print Rollcall's own.
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Option(names = "--version", required = true, paramLabel = "VERSION",
            description = "The version coordinators see (their policies judge it); required.")
    private String version;

    // No picocli default: an option left out must leave the file's key (or the catalog's default) standing.
    @Option(names = {"-p", "--port"}, paramLabel = "N",
            description = "The port to bind; 0 for any free one (default: rollcall.worker.port, else 0).")
    private Integer port;

    @Option(names = "--capability", paramLabel = "NAME[=VERSION]",
            description = "Something it can do, e.g. udf:geo_distance or plan-protocol=3 (repeatable).")
    private List<String> capabilities = new ArrayList<>();

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "A rollcall.properties file; stands for -Drollcall.config=FILE.")
    private Path config;

    /** For picocli. */
    public WorkerCommand() {
    }

    /**
     * This command's logger, made on first use: slf4j-simple fixes a logger's level when it makes it,
     * so one made as the class loads (before {@code --verbose} is applied) would never say INFO.
     */
    private static Logger log() {
        return LoggerFactory.getLogger(WorkerCommand.class);
    }

    @Override
    public Integer call() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        RollcallWorker.Builder builder = builder();
        RollcallConfig cfg;
        RollcallWorker worker;
        try {
            // Inside the try: the file ROLLCALL_CONFIG or -Drollcall.config names may be missing too.
            cfg = WorkersCommand.loadConfig(spec.commandLine(), config);
            worker = builder.config(cfg).start();
        } catch (ConfigurationException e) {
            err.println("rollcall worker: " + e.getMessage() + WorkersCommand.hint(e, config));
            err.flush();
            return 2;
        } catch (IOException | RegistrationException e) {
            // The server's message names the address; a registration's names the backend.
            err.println("rollcall worker: " + PeerText.escape(String.valueOf(e.getMessage()), 512));
            err.flush();
            return 1;
        }
        MeterRegistry otlp;
        try {
            otlp = exportMeters(cfg, worker);
        } catch (ConfigurationException e) {
            worker.close(); // nobody saw it yet: the instance id it would be exported under came with the start
            err.println("rollcall worker: " + e.getMessage() + WorkersCommand.hint(e, config));
            err.flush();
            return 2;
        }
        Runnable stop = () -> stop(worker, otlp);
        try {
            out.println("worker " + worker.endpoint().url() + " version=" + worker.version()
                    + " instance=" + worker.instanceId());
            out.flush();
            log().info("worker {} version '{}' instance {} serving{}", worker.endpoint().url(), worker.version(),
                    worker.instanceId(), worker.registration().map(r -> ", registered").orElse(""));
            untilStopped(worker, stop);
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } finally {
            stop.run();
            log().info("worker {} stopped", worker.endpoint().url());
            out.flush();
            err.flush();
        }
    }

    /**
     * The worker's meters ({@link WorkerMetrics}) pushed over OTLP when {@code rollcall.metrics.otlp.url}
     * is set, on a resource naming {@code rollcall-worker}, its version and its instance id; else null.
     */
    private static MeterRegistry exportMeters(RollcallConfig cfg, RollcallWorker worker) {
        return OtlpMetrics.start(cfg, SERVICE_NAME, worker.version(), worker.instanceId()).map(registry -> {
            new WorkerMetrics(worker).bindTo(registry);
            log().info("worker {} pushes its meters over OTLP (rollcall.metrics.otlp.url)", worker.endpoint().url());
            return registry;
        }).orElse(null);
    }

    /**
     * Drains, waits for holders and calls, leaves discovery, stops (RollcallWorker's orderly stop);
     * then closes the OTLP registry, whose last export reads the worker after its drain.
     */
    private static void stop(RollcallWorker worker, MeterRegistry otlp) {
        try {
            worker.close();
        } finally {
            if (otlp != null) {
                otlp.close();
            }
        }
    }

    /** The builder with this command's options; a bad one fails naming it and its value (escaped). */
    private RollcallWorker.Builder builder() {
        String problem = WorkerEndpoint.versionLabelProblem(version);
        if (problem != null) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--version': " + problem);
        }
        RollcallWorker.Builder builder = RollcallWorker.builder().version(version);
        if (port != null) {
            if (port < 0 || port > 65535) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--port': " + port
                        + " is outside 0..65535");
            }
            builder.port(port);
        }
        if (!capabilities.isEmpty()) {
            try {
                builder.capabilities(capabilities.toArray(String[]::new));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--capability': "
                        + e.getMessage());
            }
        }
        return builder;
    }

    /**
     * Waits for SIGTERM or SIGINT when this run owns the process, else (in-process) for an interrupt.
     * The shutdown hook covers every other way the JVM ends and is taken back after an orderly stop,
     * whose closing the caller does.
     */
    private void untilStopped(RollcallWorker worker, Runnable stop) throws InterruptedException {
        if (!RollcallCommand.ownsProcess(parent)) {
            new CountDownLatch(1).await();
            return;
        }
        Thread hook = new Thread(stop, "rollcall-worker-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        StopSignals signals;
        try {
            signals = StopSignals.take();
        } catch (IllegalArgumentException e) {
            // -Xrs and the like: the JVM keeps the signals, so the hook drains and the exit code is the JVM's.
            log().warn("SIGTERM and SIGINT stay with the JVM ({}): the shutdown hook drains the worker on exit",
                    PeerText.escape(String.valueOf(e.getMessage()), 256));
            worker.awaitTermination();
            return;
        }
        try (signals) {
            signals.stop().await();
            log().info("draining {}: signal received", worker.endpoint().url());
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // The hook is running or will: closing twice is harmless.
            }
        }
    }
}
