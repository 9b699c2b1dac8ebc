package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.conformance.ConformanceReport;
import dev.rollcall.conformance.RuleResult;
import dev.rollcall.conformance.WorkerConformance;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code rollcall conform grpc://host:port}: checks one running worker, in any language, against
 * the rules of {@code docs/protocol.md} that can be seen from outside (testkit's
 * {@link WorkerConformance}), and prints one line per rule (W1 to W22): {@code passed},
 * {@code FAILED} with what it saw, {@code not implemented (recommended)} with what coordinators lose
 * without it, or {@code not checked} with why, then a summary line. A recommended rule is one whose
 * absence coordinators tolerate (revisions, heartbeats, the stream, reflection, exact drain): its
 * absence fails the run only with {@code --strict}.
 *
 * <p>{@code --expect-drain} and {@code --expect-restart} first watch for {@code --watch}, then wait
 * (up to {@code --wait}) for the operator to stop the worker gracefully or restart it on the same
 * address while the command watches; a line on stderr says when to do it. In a drain the command's
 * streams hold the worker (exact drain, W18 to W22) for {@code --hold} before they release it.
 *
 * <p>Exit codes: 0 when no rule failed, 1 when one did (with {@code --strict}: or a recommended rule is
 * not implemented), 2 on a usage error (a malformed endpoint, duration or option), with a message naming it.
 */
@Command(name = "conform",
        mixinStandardHelpOptions = true,
        versionProvider = RollcallCommand.Version.class,
        sortOptions = false,
        description = {
            "Checks a running worker against the rules of the rollcall.v1 protocol (docs/protocol.md) that can be"
                    + " seen from outside, and prints one line per rule: passed, FAILED with what it saw, not implemented"
                    + " (recommended) with what coordinators lose without it, or not checked with why."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:no rule failed",
            "1:a rule failed (with --strict: or a recommended rule is not implemented)",
            "2:usage error (malformed endpoint, duration or option)"
        })
public final class ConformCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private LoggingOptions logging;

    @Parameters(index = "0", paramLabel = "ENDPOINT", description = "The worker: grpc://host:port or grpcs://host:port.")
    private String endpoint;

    @Option(names = "--expect-drain",
            description = "Wait for the worker to be stopped gracefully (SIGTERM) while watched, and check the drain (W13).")
    private boolean expectDrain;

    @Option(names = "--expect-restart",
            description = "Wait for the worker to be restarted on the same address while watched, and check that a new"
                    + " instance id answers there (W3).")
    private boolean expectRestart;

    @Option(names = "--strict",
            description = "Fail on a recommended rule the worker does not implement (one whose absence coordinators"
                    + " tolerate: revisions, heartbeats, the stream, reflection, exact drain), not only on a broken one.")
    private boolean strict;

    @Option(names = {"-t", "--timeout"}, paramLabel = "DURATION", defaultValue = "2s",
            converter = Converters.PositiveDuration.class,
            description = "Deadline of each call, and how long a change may take to reach the stream"
                    + " (default: ${DEFAULT-VALUE}).")
    private Duration timeout;

    @Option(names = "--watch", paramLabel = "DURATION", defaultValue = "3s",
            converter = Converters.PositiveDuration.class,
            description = "How long to watch the streams before asking for the drain or restart (default: ${DEFAULT-VALUE}).")
    private Duration watch;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "60s",
            converter = Converters.PositiveDuration.class,
            description = "How long to wait for the expected drain and restart (default: ${DEFAULT-VALUE}).")
    private Duration waitFor;

    @Option(names = "--hold", paramLabel = "DURATION", defaultValue = "750ms",
            converter = Converters.PositiveDuration.class,
            description = "With --expect-drain: how long the command's holder streams hold the draining worker before"
                    + " they release it; it must keep serving meanwhile (W19) and stop soon after (W22); keep it below"
                    + " the worker's shutdown grace (default: ${DEFAULT-VALUE}).")
    private Duration hold;

    @Option(names = "--heartbeat", paramLabel = "DURATION", defaultValue = "1s",
            converter = Converters.PositiveDuration.class,
            description = "The heartbeat to ask for on the watched stream, at most 60s (default: ${DEFAULT-VALUE}).")
    private Duration heartbeat;

    @Option(names = "--tls-ca", paramLabel = "FILE",
            description = "PEM CA certificate(s) a grpcs:// worker must chain to (default: the JDK's trust store).")
    private Path tlsCa;

    /** For picocli. */
    public ConformCommand() {
    }

    @Override
    public Integer call() {
        logging.apply();
        WorkerEndpoint target;
        try {
            target = WorkerEndpoint.parse(endpoint);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter ENDPOINT: "
                    + e.getMessage());
        }
        WorkerConformance.Builder kit = WorkerConformance.builder().target(target);
        try {
            kit.callTimeout(timeout).watch(watch).waitFor(waitFor).hold(hold).heartbeat(heartbeat)
                    .expectDrain(expectDrain).expectRestart(expectRestart).strict(strict);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--heartbeat': " + e.getMessage());
        }
        if (tlsCa != null) {
            if (!target.tls()) {
                throw new ParameterException(spec.commandLine(), "Option '--tls-ca' needs a grpcs:// endpoint, not "
                        + target.url());
            }
            if (!Files.isReadable(tlsCa)) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--tls-ca': " + tlsCa
                        + ": no such readable file (" + tlsCa.toAbsolutePath() + ")");
            }
            try {
                kit.credentials(TlsChannelCredentials.newBuilder().trustManager(tlsCa.toFile()).build());
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--tls-ca': " + tlsCa
                        + ": " + e.getMessage());
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        kit.onWaiting(expectation -> {
            err.println("rollcall conform: watching " + target.url() + "; " + switch (expectation) {
                case DRAIN -> "stop it gracefully now (SIGTERM)" + (expectRestart ? ", then start it again on the same address" : "");
                case RESTART -> "restart it on the same address now";
            } + " (waiting up to " + waitFor.toSeconds() + " s)");
            err.flush();
        });
        ConformanceReport report = kit.build().check();
        report.lines().forEach(out::println);
        long failed = report.failures().size();
        long passed = count(report, RuleResult.Outcome.PASSED);
        long absent = count(report, RuleResult.Outcome.NOT_IMPLEMENTED);
        out.println(target.url() + ": " + passed + " passed, " + failed + " failed, " + absent
                + " not implemented (recommended), " + count(report, RuleResult.Outcome.NOT_CHECKED) + " not checked");
        out.flush();
        return failed == 0 ? 0 : 1;
    }

    private static long count(ConformanceReport report, RuleResult.Outcome outcome) {
        return report.results().stream().filter(r -> r.outcome() == outcome).count();
    }
}
