package dev.rollcall.kubernetes.gate.internal;

import dev.rollcall.api.PeerText;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the API server takes each kind of the gate's patches now: a kind it refused (403: the Role
 * lacks the right) or failed (no answer, 5xx) stays shut for a backoff that doubles up to
 * {@value #MAX_BACKOFF_SECONDS} seconds, so that one patch a backoff tries again rather than a storm.
 * Says so once per streak, with what to add to the Role, and once when the kind works again. Not
 * thread-safe: the writer's lock guards it.
 */
final class WriteDoors {

    private static final Logger LOG = LoggerFactory.getLogger(WriteDoors.class);
    private static final long FIRST_BACKOFF = TimeUnit.MILLISECONDS.toNanos(500);
    private static final int MAX_BACKOFF_SECONDS = 30;

    /** One kind of patch: the verb and resource a Role grants it by. */
    enum Door {
        /** The readiness gate condition. */
        STATUS("pods/status"),
        /** The deletion cost annotation. */
        COST("pods");

        final String resource;

        Door(String resource) {
            this.resource = resource;
        }
    }

    private static final class Shut {
        long backoff;
        long until;
        /** What was logged of this streak: "refused", "failed", or null. */
        String said;
    }

    private final String namespace;
    private final Map<Door, Shut> shut = new EnumMap<>(Door.class);

    WriteDoors(String namespace) {
        this.namespace = namespace;
    }

    /** Nanoseconds from {@code now} (a {@link System#nanoTime()}) until {@code door} opens again; 0: open. */
    long shutFor(Door door, long now) {
        Shut s = shut.get(door);
        return s == null ? 0 : Math.max(0, s.until - now);
    }

    /** The API server answered 403: the Role lacks the right. */
    void refused(Door door, long now) {
        Shut s = shutNow(door, now);
        if (!"refused".equals(s.said)) {
            s.said = "refused";
            LOG.error("k8s gate: forbidden to patch {} in namespace {}: the Role needs verb \"patch\" on resource"
                    + " \"{}\" (deploy/kubernetes/rollcall.yaml); trying again with backoff, discovery goes on",
                    door.resource, PeerText.escape(namespace), door.resource);
        }
    }

    /** The API server did not answer, or failed: the patch of pod {@code pod} waits for a backoff. */
    void failed(Door door, String pod, String cause, long now) {
        Shut s = shutNow(door, now);
        if (!"failed".equals(s.said)) {
            s.said = "failed";
            LOG.warn("k8s gate: cannot patch {} of pod {}/{}: {}; trying again with backoff (up to {}s), discovery"
                    + " goes on", door.resource, PeerText.escape(namespace), PeerText.escape(pod),
                    PeerText.escape(cause, 512), MAX_BACKOFF_SECONDS);
        }
    }

    /** A patch of this kind went through: the door is open. */
    void succeeded(Door door) {
        Shut s = shut.remove(door);
        if (s != null) {
            LOG.info("k8s gate: patching {} in namespace {} works again", door.resource, PeerText.escape(namespace));
        }
    }

    private Shut shutNow(Door door, long now) {
        Shut s = shut.computeIfAbsent(door, d -> new Shut());
        s.backoff = s.backoff == 0 ? FIRST_BACKOFF
                : Math.min(s.backoff * 2, TimeUnit.SECONDS.toNanos(MAX_BACKOFF_SECONDS));
        s.until = now + s.backoff;
        return s;
    }
}
