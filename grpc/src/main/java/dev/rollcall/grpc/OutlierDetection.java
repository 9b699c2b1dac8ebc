package dev.rollcall.grpc;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code rollcall.calls.outlier-detection.*} keys ({@link CallKeys}) as gRPC's own
 * {@code outlier_detection_experimental} config (gRFC A50), which the {@code rollcall:} target's
 * service config hands to the {@value VerifiedLoadBalancerProvider#POLICY} gate: it puts grpc-java's
 * policy between itself and the child that picks, so per-call statistics, ejection and its growing
 * time are gRPC's, not ours. Immutable.
 *
 * @param json the policy's config without its {@code childPolicy}, as a service config's JSON
 *             carries it; {@code null} when off
 */
record OutlierDetection(Map<String, ?> json) {

    /** The name of grpc-java's policy (grpc-util's {@code OutlierDetectionLoadBalancerProvider}). */
    static final String POLICY = "outlier_detection_experimental";
    /** Off: the gate's child picks over every verified worker, as before. */
    static final OutlierDetection OFF = new OutlierDetection(null);

    /**
     * The keys in {@code settings}, checked.
     *
     * @throws ConfigurationException naming the key and the value when one is malformed or out of bounds
     */
    static OutlierDetection read(Settings settings) {
        // Every key is read, on or off, so that a bad value is never hidden behind enabled=false.
        boolean on = settings.get(CallKeys.OUTLIER_DETECTION);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("interval", duration(settings.get(CallKeys.INTERVAL)));
        json.put("baseEjectionTime", duration(settings.get(CallKeys.BASE_EJECTION_TIME)));
        json.put("maxEjectionTime", duration(settings.get(CallKeys.MAX_EJECTION_TIME)));
        json.put("maxEjectionPercentage", number(settings.get(CallKeys.MAX_EJECTION_PERCENT)));
        json.put("successRateEjection", Map.of(
                "stdevFactor", number(settings.get(CallKeys.SUCCESS_RATE_STDEV_FACTOR)),
                "enforcementPercentage", number(settings.get(CallKeys.SUCCESS_RATE_ENFORCEMENT)),
                "minimumHosts", number(settings.get(CallKeys.SUCCESS_RATE_MINIMUM_HOSTS)),
                "requestVolume", number(settings.get(CallKeys.SUCCESS_RATE_REQUEST_VOLUME))));
        json.put("failurePercentageEjection", Map.of(
                "threshold", number(settings.get(CallKeys.FAILURE_PERCENTAGE_THRESHOLD)),
                "enforcementPercentage", number(settings.get(CallKeys.FAILURE_PERCENTAGE_ENFORCEMENT)),
                "minimumHosts", number(settings.get(CallKeys.FAILURE_PERCENTAGE_MINIMUM_HOSTS)),
                "requestVolume", number(settings.get(CallKeys.FAILURE_PERCENTAGE_REQUEST_VOLUME))));
        return on ? new OutlierDetection(Map.copyOf(json)) : OFF;
    }

    boolean enabled() {
        return json != null;
    }

    /** A protobuf JSON duration, as gRPC's parser reads it: {@code 1.500000000s}. */
    private static String duration(Duration d) {
        return d.getSeconds() + "." + String.format("%09d", d.getNano()) + "s";
    }

    /** JSON numbers are doubles to gRPC's parser, as they come from a parsed service config. */
    private static Double number(int n) {
        return (double) n;
    }
}
