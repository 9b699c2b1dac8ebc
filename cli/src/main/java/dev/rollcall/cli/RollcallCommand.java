package dev.rollcall.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code rollcall} command. Each job is a subcommand; run without one, it prints its usage.
 *
 * <pre>{@code
 * rollcall demo                          # a local fleet, a version policy, a job over Arrow Flight, a rolling upgrade
 * rollcall workers --config rollcall.properties [--watch] [--output json]
 * rollcall probe grpc://w1:7001 grpc://w2:7001 --expect ^1.4
 * rollcall conform grpc://w1:7001 [--expect-drain] [--expect-restart]
 * rollcall serve --config rollcall.properties   # the fleet API for coordinators in any language
 * rollcall worker --version 1.4.0 [--port 7001] # a reference worker, drained by SIGTERM
 * rollcall --version
 * }</pre>
 *
 * <p>Exit codes: 0 success, 1 the job ran and the answer is "no" (a check failed, a worker did not
 * match or answer), 2 a usage or configuration error, with a message naming the option or key.
 *
 * <p>Subcommands print to {@code spec.commandLine().getOut()} and {@code getErr()}, so that they can
 * be run in-process with captured output: {@code new CommandLine(new RollcallCommand()).setOut(w).execute("demo")}.
 * Run that way, neither stream counts as a terminal (no redraws, no progress unless asked for).
 */
@Command(name = "rollcall",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        description = "Finds the workers of a distributed compute engine and keeps only those whose version"
                + " can be mixed safely.",
        subcommands = {DemoCommand.class, WorkersCommand.class, ProbeCommand.class, ConformCommand.class,
            ConsoleCommand.class, ServeCommand.class, WorkerCommand.class, CommandLine.HelpCommand.class})
public final class RollcallCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    private final Terminals terminals;
    /** Whether this run is the process's own ({@link #main}): only then may a subcommand take its signals. */
    private final boolean ownsProcess;

    /** For picocli and in-process runs: neither output stream is treated as a terminal. */
    public RollcallCommand() {
        this(Terminals.NONE, false);
    }

    RollcallCommand(Terminals terminals, boolean ownsProcess) {
        this.terminals = terminals;
        this.ownsProcess = ownsProcess;
    }

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        // Before anything creates a logger: slf4j-simple reads its configuration once.
        LoggingOptions.configureDefaults();
        LoggingOptions.bridgeJavaUtilLogging();
        System.exit(commandLine(new RollcallCommand(Terminals.detect(), true)).execute(args));
    }

    /** The command line for {@code command}, with help that wraps at spaces only. */
    static CommandLine commandLine(RollcallCommand command) {
        return UnbrokenHelp.apply(new CommandLine(command));
    }

    /** Whether stdout and stderr are terminals, as seen from a subcommand whose parent is {@code parent} (may be null). */
    static Terminals terminals(RollcallCommand parent) {
        return parent == null ? Terminals.NONE : parent.terminals;
    }

    /**
     * Whether the subcommand whose parent is {@code parent} (may be null) runs as the process's main
     * command, so that SIGTERM and SIGINT are its to handle; never in-process (a test's JVM keeps its own).
     */
    static boolean ownsProcess(RollcallCommand parent) {
        return parent != null && parent.ownsProcess;
    }

    /** Without a subcommand there is nothing to do: say what there is. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return CommandLine.ExitCode.USAGE;
    }

    /** The version Maven built, read from a filtered resource (works from the jar and from classes/). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            Properties p = new Properties();
            try (InputStream in = RollcallCommand.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the rollcall version", e);
            }
            return new String[] {
                "rollcall " + p.getProperty("version", "(unknown version)"),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + "), "
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch")
            };
        }
    }
}
