package dev.rollcall.cli;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.kubernetes.gate.KubernetesGate;
import dev.rollcall.server.FleetServer;
import dev.rollcall.server.ServerKeys;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
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
 * {@code rollcall serve}: one resolver, built from the configuration exactly as a JVM coordinator
 * builds it ({@link WorkerResolver#fromConfig(RollcallConfig)}), served by a {@link FleetServer} to
 * coordinators in any language until SIGTERM or SIGINT. Prints one line per port once both listen.
 *
 * <p>Run as the process's command, SIGTERM and SIGINT close the server, then the resolver, and the
 * process exits 0; a shutdown hook does the same on any other way out of the JVM. In-process (tests),
 * interrupting the thread stops it. Exit codes: 0 when stopped; 1 when a port cannot be bound; 2 on
 * a usage or configuration error, naming the option, or the key, its value and where it came from.
 */
@Command(name = "serve",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        sortOptions = false,
        description = {
            "Runs the resolver of the configuration a JVM coordinator would use and serves its snapshots to"
                    + " coordinators in any language: rollcall.v1.FleetService (GetFleet, WatchFleet, HoldFleet)"
                    + " on one gRPC port, /readyz, /healthz, /metrics and the console on one HTTP port. Runs until"
                    + " SIGTERM or Ctrl-C, then exits 0.",
            "Reads the same configuration as the library (rollcall.serve.* for the ports, TLS, token and limits);"
                    + " --config FILE stands for -Drollcall.config=FILE."
        },
        footerHeading = "%nExample:%n",
        footer = {
            "  rollcall serve --config rollcall.properties",
            "  rollcall serve --config rollcall.properties --port 0 --http-port 0"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped (SIGTERM, Ctrl-C)",
            "1:a port cannot be bound",
            "2:usage or configuration error"
        })
public final class ServeCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);
    /** How the options name themselves as a value's origin in a configuration error. */
    private static final String PORT_OPTION = "--port";
    private static final String HTTP_PORT_OPTION = "--http-port";

    @Spec
    private CommandSpec spec;

    @ParentCommand
    private RollcallCommand parent;

    @Mixin
    private LoggingOptions logging;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "A rollcall.properties file; stands for -Drollcall.config=FILE.")
    private Path config;

    // No picocli default: an option left out must leave the file's key (or the catalog's default) standing.
    @Option(names = {"-p", PORT_OPTION}, paramLabel = "N",
            description = "The gRPC port of the fleet API; 0 for any free one (default: rollcall.serve.port, else 7700).")
    private Integer port;

    @Option(names = HTTP_PORT_OPTION, paramLabel = "N",
            description = "The HTTP port of /readyz, /healthz, /metrics and the console; 0 for any free one"
                    + " (default: rollcall.serve.http-port, else 7701).")
    private Integer httpPort;

    /** For picocli. */
    public ServeCommand() {
    }

    @Override
    public Integer call() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        RollcallConfig cfg;
        WorkerResolver resolver;
        try {
            // Inside the try: the file ROLLCALL_CONFIG or -Drollcall.config names may be missing too.
            cfg = withOption(withOption(WorkersCommand.loadConfig(spec.commandLine(), config),
                    ServerKeys.PORT.name(), port, PORT_OPTION), ServerKeys.HTTP_PORT.name(), httpPort, HTTP_PORT_OPTION);
            resolver = WorkerResolver.fromConfig(cfg);
        } catch (ConfigurationException e) {
            err.println("rollcall serve: " + e.getMessage() + WorkersCommand.hint(e, config));
            err.flush();
            return 2;
        }
        try (resolver) {
            FleetServer server;
            try {
                server = FleetServer.builder(resolver).config(cfg).start();
            } catch (ConfigurationException e) {
                err.println("rollcall serve: " + withOrigin(e, cfg));
                return 2;
            } catch (IOException | UncheckedIOException e) {
                // Each door's message names the address and the keys that chose it.
                err.println("rollcall serve: " + PeerText.escape(String.valueOf(e.getMessage()), 512));
                return 1;
            }
            KubernetesGate gate;
            try {
                gate = KubernetesGate.start(resolver, cfg).orElse(null);
            } catch (ConfigurationException e) {
                server.close();
                err.println("rollcall serve: " + withOrigin(e, cfg));
                return 2;
            }
            try (server; gate) {
                out.println("fleet api grpc://" + hostPort(server.grpcAddress()));
                if (gate != null) {
                    out.println("readiness gate " + gate.gate() + " on the worker pods");
                }
                server.xdsFleet().ifPresent(name ->
                        out.println("xds xds:///" + name + " on grpc://" + hostPort(server.grpcAddress())));
                server.httpAddress().ifPresent(http ->
                        out.println("http http://" + hostPort(http) + " (/readyz /healthz /metrics, console)"));
                out.flush();
                log.info("serving the fleet of discovery {} and policy {} ({}; grpc {}{})",
                        resolver.discoveryDescription(), resolver.policy().description(), server.instanceId(),
                        server.grpcAddress(), server.httpAddress().map(a -> ", http " + a).orElse(""));
                untilStopped(server, resolver, gate);
            }
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * Waits for SIGTERM or SIGINT when this run owns the process, else (in-process) for an interrupt.
     * The shutdown hook covers every other way the JVM ends (SIGHUP, an exit elsewhere) and is taken
     * back after an orderly stop, whose closing the caller does. It closes the gate first (null when
     * none), so that the Lease is released and another replica writes at its next try.
     */
    private void untilStopped(FleetServer server, WorkerResolver resolver, KubernetesGate gate)
            throws InterruptedException {
        if (!RollcallCommand.ownsProcess(parent)) {
            new CountDownLatch(1).await();
            return;
        }
        Thread hook = new Thread(() -> {
            try (resolver; server; gate) {
                log.info("stopping: the JVM is shutting down");
            }
        }, "rollcall-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        StopSignals signals;
        try {
            signals = StopSignals.take();
        } catch (IllegalArgumentException e) {
            // -Xrs and the like: the JVM keeps the signals, so the hook closes and the exit code is the JVM's.
            log.warn("SIGTERM and SIGINT stay with the JVM ({}): the shutdown hook closes the server on exit",
                    PeerText.escape(String.valueOf(e.getMessage()), 256));
            server.awaitTermination();
            return;
        }
        try (signals) {
            signals.stop().await();
            log.info("stopping: signal received");
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // The hook is running or will: closing twice is harmless.
            }
        }
    }

    /** {@code config} with {@code key} set from {@code option} when it was given, named as its origin. */
    private RollcallConfig withOption(RollcallConfig config, String key, Integer value, String option) {
        if (value == null) {
            return config;
        }
        if (value < 0 || value > 65535) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside 0..65535");
        }
        return config.with(key, Integer.toString(value), "option " + option);
    }

    /**
     * {@code e}'s message with where its key's value came from ({@code (from rollcall.properties)}),
     * as the resolver's own errors say it; the server's do not name it.
     */
    private static String withOrigin(ConfigurationException e, RollcallConfig cfg) {
        String message = String.valueOf(e.getMessage());
        String key = e.key();
        if (key == null || !key.startsWith("rollcall.") || message.contains(" (from ")) {
            return message;
        }
        String origin = cfg.origin(key);
        return "default".equals(origin) || message.contains("(" + origin + ")") ? message
                : message + " (from " + origin + ")";
    }

    /** {@code host:port}, an IPv6 host in brackets as a URL has it. */
    static String hostPort(InetSocketAddress address) {
        String host = address.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
