package dev.rollcall.grpc;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.time.Duration;
import java.util.List;

/**
 * Every {@code rollcall.calls.*} key a {@code rollcall:} channel reads, each declared once: gRPC's
 * own outlier detection (gRFC A50, grpc-java's {@code outlier_detection_experimental}) beneath the
 * {@value VerifiedLoadBalancerProvider#POLICY} gate. A channel reads them from its resolver's
 * configuration when it is built ({@code rollcall:///}: {@code rollcall.properties} and the rest of
 * the chain). Defaults are gRPC's own, which judge no worker of a channel with fewer than five
 * and, with {@code max-ejection-percent}, eject at most one of a channel with up to ten. Found by
 * {@link java.util.ServiceLoader}. Stateless.
 */
public final class CallKeys implements KeyCatalog {

    private static final String GRPC = "rollcall-grpc";
    private static final String OD = "rollcall.calls.outlier-detection.";

    public static final SettingKey<Boolean> OUTLIER_DETECTION = SettingKey.define(GRPC, OD + "enabled",
            SettingType.BOOLEAN, "eject workers from a rollcall: channel's picks on their calls' statistics"
                    + " (gRPC's outlier detection, under the gate)").byDefault(true);
    public static final SettingKey<Duration> INTERVAL = SettingKey.define(GRPC, OD + "interval",
            SettingType.DURATION, "how often the statistics are looked at and reset")
            .byDefault(Duration.ofSeconds(10)).above(Duration.ZERO);
    public static final SettingKey<Duration> BASE_EJECTION_TIME = SettingKey.define(GRPC, OD + "base-ejection-time",
            SettingType.DURATION, "an ejection lasts this times how often the worker was ejected")
            .byDefault(Duration.ofSeconds(30)).above(Duration.ZERO);
    public static final SettingKey<Duration> MAX_EJECTION_TIME = SettingKey.define(GRPC, OD + "max-ejection-time",
            SettingType.DURATION, "the longest ejection (or base-ejection-time, if longer)")
            .byDefault(Duration.ofMinutes(5)).above(Duration.ZERO);
    public static final SettingKey<Integer> MAX_EJECTION_PERCENT = SettingKey.define(GRPC,
            OD + "max-ejection-percent", SettingType.WHOLE_NUMBER,
            "no further ejection while at least this percentage of the channel's workers is ejected; 0: none").byDefault(10).atLeast(0)
            .atMost(100);
    public static final SettingKey<Integer> SUCCESS_RATE_STDEV_FACTOR = SettingKey.define(GRPC,
            OD + "success-rate.stdev-factor", SettingType.WHOLE_NUMBER,
            "in thousandths: a worker is an outlier below the mean success rate less this many standard deviations")
            .byDefault(1900).atLeast(0).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> SUCCESS_RATE_ENFORCEMENT = SettingKey.define(GRPC,
            OD + "success-rate.enforcement-percentage", SettingType.WHOLE_NUMBER,
            "the chance in percent that such an outlier is ejected; 0 turns success-rate ejection off")
            .byDefault(100).atLeast(0).atMost(100);
    public static final SettingKey<Integer> SUCCESS_RATE_MINIMUM_HOSTS = SettingKey.define(GRPC,
            OD + "success-rate.minimum-hosts", SettingType.WHOLE_NUMBER,
            "workers with request-volume calls in an interval needed before any is judged by success rate")
            .byDefault(5).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> SUCCESS_RATE_REQUEST_VOLUME = SettingKey.define(GRPC,
            OD + "success-rate.request-volume", SettingType.WHOLE_NUMBER,
            "calls a worker needs in an interval to be judged by success rate")
            .byDefault(100).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> FAILURE_PERCENTAGE_THRESHOLD = SettingKey.define(GRPC,
            OD + "failure-percentage.threshold", SettingType.WHOLE_NUMBER,
            "a worker is an outlier when more than this percentage of its calls in an interval failed")
            .byDefault(85).atLeast(0).atMost(100);
    public static final SettingKey<Integer> FAILURE_PERCENTAGE_ENFORCEMENT = SettingKey.define(GRPC,
            OD + "failure-percentage.enforcement-percentage", SettingType.WHOLE_NUMBER,
            "the chance in percent that such an outlier is ejected; 0 turns failure-percentage ejection off")
            .byDefault(100).atLeast(0).atMost(100);
    public static final SettingKey<Integer> FAILURE_PERCENTAGE_MINIMUM_HOSTS = SettingKey.define(GRPC,
            OD + "failure-percentage.minimum-hosts", SettingType.WHOLE_NUMBER,
            "workers with request-volume calls in an interval needed before any is judged by failure percentage")
            .byDefault(5).atLeast(1).atMost(Integer.MAX_VALUE);
    public static final SettingKey<Integer> FAILURE_PERCENTAGE_REQUEST_VOLUME = SettingKey.define(GRPC,
            OD + "failure-percentage.request-volume", SettingType.WHOLE_NUMBER,
            "calls a worker needs in an interval to be judged by failure percentage")
            .byDefault(50).atLeast(1).atMost(Integer.MAX_VALUE);

    private static final List<SettingKey<?>> KEYS = List.of(OUTLIER_DETECTION, INTERVAL, BASE_EJECTION_TIME,
            MAX_EJECTION_TIME, MAX_EJECTION_PERCENT, SUCCESS_RATE_STDEV_FACTOR, SUCCESS_RATE_ENFORCEMENT,
            SUCCESS_RATE_MINIMUM_HOSTS, SUCCESS_RATE_REQUEST_VOLUME, FAILURE_PERCENTAGE_THRESHOLD,
            FAILURE_PERCENTAGE_ENFORCEMENT, FAILURE_PERCENTAGE_MINIMUM_HOSTS, FAILURE_PERCENTAGE_REQUEST_VOLUME);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
