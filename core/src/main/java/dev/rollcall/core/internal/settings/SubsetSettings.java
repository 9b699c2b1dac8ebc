package dev.rollcall.core.internal.settings;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.core.internal.catalog.CoreKeys;
import java.net.InetAddress;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rollcall.subset.*}: how many of the workers the policy accepts this coordinator uses, and
 * the id their rendezvous weights are computed on (docs/subsets.md). Both keys are read even when
 * subsets are off, so that a {@code coordinator-id} set without a {@code size} is not reported as unknown.
 *
 * @param size          {@code rollcall.subset.size}: the workers used, at least 1
 * @param coordinatorId {@code rollcall.subset.coordinator-id}: never blank
 */
public record SubsetSettings(int size, String coordinatorId) {

    private static final Logger log = LoggerFactory.getLogger(SubsetSettings.class);

    public static final String SIZE_KEY = CoreKeys.SUBSET_SIZE.name();
    public static final String COORDINATOR_ID_KEY = CoreKeys.COORDINATOR_ID.name();

    public SubsetSettings {
        if (size < 1) {
            throw new IllegalArgumentException("subset size " + size + " is below 1");
        }
        if (coordinatorId == null || coordinatorId.isBlank()) {
            throw new IllegalArgumentException("coordinator id '" + coordinatorId + "' is blank");
        }
    }

    /**
     * The subset settings of {@code root}, or empty when {@code rollcall.subset.size}
     * is unset: every accepted worker is used, as without the feature.
     *
     * @throws ConfigurationException naming the key and the value: a size that is no whole number
     *                                from 1 to 10,000,000, a blank coordinator id
     */
    public static Optional<SubsetSettings> read(Settings root) {
        Optional<String> id = root.find(CoreKeys.COORDINATOR_ID);
        Optional<Integer> size = root.find(CoreKeys.SUBSET_SIZE);
        return size.map(s -> new SubsetSettings(s,
                id.orElseGet(() -> defaultCoordinatorId(System::getenv, SubsetSettings::localHostName))));
    }

    /**
     * The id used when none is set: {@code HOSTNAME} from {@code env} (a Kubernetes pod's name), else
     * {@code localHost} (null when the host has no name), else a random UUID, with one WARN naming
     * the key: a restarted coordinator then picks another subset.
     */
    static String defaultCoordinatorId(Function<String, String> env, Supplier<String> localHost) {
        String host = env.apply("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host.strip();
        }
        host = localHost.get();
        if (host != null && !host.isBlank()) {
            return host.strip();
        }
        String random = UUID.randomUUID().toString();
        log.warn("{} is unset and this host has no name (no HOSTNAME, no local host name): using the random id {};"
                + " a restarted coordinator will pick another subset. Set {} to keep it", COORDINATOR_ID_KEY, random,
                COORDINATOR_ID_KEY);
        return random;
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | SecurityException e) {
            return null;
        }
    }
}
