package dev.rollcall.cli;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.console.RollcallConsole;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall console}: the live fleet page ({@link RollcallConsole}) of a resolver configured
 * like {@code rollcall workers}'s, until interrupted (Ctrl-C). Prints the page's URL first. Loopback
 * unless {@code --bind} names another address and {@code --allow-remote} (or
 * {@code rollcall.console.allow-remote=true}) says so.
 *
 * <p>Exit codes: 0 when stopped; 1 when the address cannot be bound; 2 on a usage or configuration
 * error, naming the option or key.
 */
@Command(name = "console",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        sortOptions = false,
        description = {
            "Serves a live, read-only page of the fleet the configured discovery reports: every candidate with"
                    + " its version, state and reason, the version histogram, the policy's cohort, discovery's"
                    + " health and a timeline, pushed to the browser on every snapshot. Runs until interrupted.",
            "Reads the same configuration as the library; --config FILE stands for -Drollcall.config=FILE."
        },
        footerHeading = "%nExample:%n",
        footer = {
            "  rollcall console --config rollcall.properties",
            "  rollcall console --config rollcall.properties --port 9000",
            "  rollcall console --config rollcall.properties --bind 0.0.0.0 --allow-remote"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped",
            "1:the address cannot be bound",
            "2:usage or configuration error"
        })
public final class ConsoleCommand implements Callable<Integer> {

    /** The page's port when none is given. */
    static final int DEFAULT_PORT = 8470;

    @Spec
    private CommandSpec spec;

    @Mixin
    private LoggingOptions logging;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "A rollcall.properties file; stands for -Drollcall.config=FILE.")
    private Path config;

    @Option(names = {"-p", "--port"}, paramLabel = "N", defaultValue = "" + DEFAULT_PORT,
            description = "The page's port; 0 for any free one (default: ${DEFAULT-VALUE}).")
    private int port;

    @Option(names = "--bind", paramLabel = "ADDR", defaultValue = "127.0.0.1",
            description = "The address to listen on (default: ${DEFAULT-VALUE}); any other than loopback needs"
                    + " --allow-remote.")
    private String bind;

    @Option(names = "--allow-remote",
            description = "Allow a non-loopback --bind (the page has no authentication of its own);"
                    + " stands for rollcall.console.allow-remote=true. Requests must still name localhost, a"
                    + " loopback address or a host in rollcall.console.allowed-hosts.")
    private boolean allowRemote;

    @Option(names = "--classpath", paramLabel = "PATHS", defaultValue = "${env:ROLLCALL_CLASSPATH}",
            description = "Jars and class directories holding your own policies or discovery backends, as for"
                    + " workers; default: ROLLCALL_CLASSPATH.")
    private String classpath;

    /** For picocli. */
    public ConsoleCommand() {
    }

    @Override
    public Integer call() {
        logging.apply();
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--port': " + port
                    + " is outside 0..65535");
        }
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(InetAddress.getByName(bind), port);
        } catch (UnknownHostException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--bind': " + bind
                    + " does not resolve");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ClassLoader plugins;
        try {
            plugins = PluginClassPath.loader(classpath);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--classpath': "
                    + e.getMessage());
        }
        try {
            RollcallConfig cfg;
            WorkerResolver resolver;
            try {
                // Inside the try: the file ROLLCALL_CONFIG or -Drollcall.config names may be missing too.
                cfg = WorkersCommand.loadConfig(spec.commandLine(), config);
                resolver = WorkerResolver.builder().config(cfg).classLoader(plugins).name("cli").build();
            } catch (ConfigurationException e) {
                err.println("rollcall console: " + e.getMessage() + WorkersCommand.hint(e, config));
                return 2;
            }
            try (resolver) {
                RollcallConsole console;
                try {
                    RollcallConsole.Builder builder = RollcallConsole.builder(resolver).config(cfg).address(address);
                    if (allowRemote) {
                        builder.allowRemote(true);
                    }
                    console = builder.start();
                } catch (ConfigurationException e) {
                    err.println("rollcall console: " + e.getMessage());
                    return 2;
                } catch (UncheckedIOException e) {
                    err.println("rollcall console: " + e.getMessage());
                    return 1;
                }
                try (console) {
                    out.println("Rollcall console: " + console.uri() + " (discovery " + resolver.discoveryDescription()
                            + ", policy " + resolver.policy().description() + "; Ctrl-C stops)");
                    out.flush();
                    new CountDownLatch(1).await(); // until interrupted; Ctrl-C ends the JVM instead
                }
            }
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } finally {
            out.flush();
            err.flush();
            WorkersCommand.closePlugins(plugins);
        }
    }
}
