package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import dev.rollcall.api.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where each {@code rollcall.kubernetes.*} key is defined, once: the gate's internals read these, and
 * the public {@link dev.rollcall.kubernetes.gate.KubernetesGateKeys} hands out the same objects.
 * Stateless.
 */
public final class GateKeys {

    private static final String MODULE = "rollcall-kubernetes-gate";
    private static final String SCOPE = "rollcall.kubernetes.";

    public static final SettingKey<String> READINESS_GATE = SettingKey.define(MODULE, SCOPE + "readiness-gate",
            SettingType.TEXT, "the pod condition rollcall serve sets from its verdict on each worker pod (the"
                    + " conditionType of the pods' spec.readinessGates, e.g. rollcall.dev/compatible); unset: none");
    public static final SettingKey<Boolean> POD_DELETION_COST = SettingKey.define(MODULE,
            SCOPE + "pod-deletion-cost", SettingType.BOOLEAN, "also set controller.kubernetes.io/pod-deletion-cost"
                    + " lower on pods outside the chosen cohort and on draining pods, so that a scale-down takes"
                    + " them first").byDefault(false);
    public static final SettingKey<Integer> WRITES_PER_SECOND = SettingKey.define(MODULE,
            SCOPE + "writes-per-second", SettingType.WHOLE_NUMBER, "most pod patches the gate sends per second,"
                    + " all pods together, after a burst of one second's worth (changes wait, coalesced,"
                    + " beyond it)").byDefault(20).atLeast(1)
            .atMost(10_000);
    public static final SettingKey<String> LEASE_NAME = SettingKey.define(MODULE, SCOPE + "lease.name",
            SettingType.TEXT, "the coordination.k8s.io Lease in the service's namespace by which replicas of"
                    + " rollcall serve elect the one that writes").byDefault("rollcall-gate");
    public static final SettingKey<Duration> LEASE_DURATION = SettingKey.define(MODULE, SCOPE + "lease.duration",
            SettingType.DURATION, "how long a writer's lease lasts unrenewed: the longest a dead writer's"
                    + " successor waits").byDefault(Duration.ofSeconds(15)).above(Duration.ZERO);
    public static final SettingKey<Duration> LEASE_RENEW_DEADLINE = SettingKey.define(MODULE,
            SCOPE + "lease.renew-deadline", SettingType.DURATION, "how long the writer keeps trying to renew"
                    + " before it stops writing; below lease.duration").byDefault(Duration.ofSeconds(10))
            .above(Duration.ZERO);
    public static final SettingKey<Duration> LEASE_RETRY_PERIOD = SettingKey.define(MODULE,
            SCOPE + "lease.retry-period", SettingType.DURATION, "how often a replica tries to take or renew the"
                    + " lease").byDefault(Duration.ofSeconds(2)).above(Duration.ZERO);
    public static final SettingKey<String> IDENTITY = SettingKey.define(MODULE, SCOPE + "identity",
            SettingType.TEXT, "this replica's name in the lease's holderIdentity, which always adds _ and a random"
                    + " suffix of its own: two processes never share an identity")
            .derivedDefault("the HOSTNAME environment variable (the pod's name), else rollcall");

    /** Every key, in the order of docs/configuration.md's table. */
    public static final List<SettingKey<?>> ALL = List.of(READINESS_GATE, POD_DELETION_COST, WRITES_PER_SECOND,
            LEASE_NAME, LEASE_DURATION, LEASE_RENEW_DEADLINE, LEASE_RETRY_PERIOD, IDENTITY);

    /**
     * The lease's three durations from {@code settings}, checked together: the writer must give up
     * before its lease can pass to another replica ({@code renew-deadline} below {@code duration}),
     * and must be able to renew at least once within that ({@code retry-period} below
     * {@code renew-deadline}).
     *
     * @throws ConfigurationException naming both keys and their values when they are out of order
     */
    public static LeaseTimings leaseTimings(Settings settings) {
        Duration duration = settings.get(LEASE_DURATION);
        Duration renewDeadline = settings.get(LEASE_RENEW_DEADLINE);
        Duration retryPeriod = settings.get(LEASE_RETRY_PERIOD);
        requireBelow(settings, LEASE_RENEW_DEADLINE, renewDeadline, LEASE_DURATION, duration,
                "a writer that could not renew would still write after another replica took the lease over");
        requireBelow(settings, LEASE_RETRY_PERIOD, retryPeriod, LEASE_RENEW_DEADLINE, renewDeadline,
                "the writer would give up before its first try to renew");
        return new LeaseTimings(duration, renewDeadline, retryPeriod);
    }

    private static void requireBelow(Settings settings, SettingKey<Duration> low, Duration lowValue,
                                     SettingKey<Duration> high, Duration highValue, String otherwise) {
        if (lowValue.compareTo(highValue) >= 0) {
            throw new ConfigurationException(low.name(), low.name() + "=" + asWritten(settings, low, lowValue)
                    + " must be below " + high.name() + "=" + asWritten(settings, high, highValue) + ": otherwise "
                    + otherwise);
        }
    }

    /** The value as the user wrote it ({@code 2s}), or the default's ISO form when unset. */
    private static String asWritten(Settings settings, SettingKey<Duration> key, Duration value) {
        return settings.raw(key.name()).map(raw -> PeerText.escape(raw.strip(), 64)).orElse(value.toString());
    }

    /**
     * The lease's durations, in order: {@code retryPeriod < renewDeadline < duration}.
     *
     * @param duration      how long a lease lasts unrenewed
     * @param renewDeadline how long the writer keeps writing without a successful renewal
     * @param retryPeriod   how often a replica tries to take or renew the lease
     */
    public record LeaseTimings(Duration duration, Duration renewDeadline, Duration retryPeriod) {
    }
    /** A condition type as Kubernetes checks it: a qualified name, {@code [DNS subdomain/]name}. */
    private static final Pattern QUALIFIED_NAME = Pattern.compile(
            "(?:(?=[^/]{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
                    + "(?=[^/]{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?");

    private GateKeys() {
    }

    /**
     * The condition type {@link #READINESS_GATE} names, or empty when it is unset.
     *
     * @throws ConfigurationException naming the key and the escaped value when it is not a
     *                                Kubernetes condition type (the API server would refuse every patch)
     */
    public static Optional<String> readinessGate(Settings settings) {
        Optional<String> gate = settings.find(READINESS_GATE);
        if (gate.isPresent() && !QUALIFIED_NAME.matcher(gate.get()).matches()) {
            throw ConfigurationException.invalid(READINESS_GATE.name(), gate.get(), "a Kubernetes condition type:"
                    + " an optional DNS subdomain prefix and '/', then a name of at most 63 characters that"
                    + " matches [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, e.g. rollcall.dev/compatible");
        }
        return gate;
    }
}
