package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/** How a discovery failure is shown in snapshots and logs. */
final class DiscoveryFailure {

    private DiscoveryFailure() {
    }

    /**
     * The failure and its causes, each once, escaped and shortened ({@link PeerText}: a backend's
     * text is in them): what a user without a logging binding still sees.
     */
    static String describe(Throwable cause) {
        StringBuilder sb = new StringBuilder(String.valueOf(cause));
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        seen.add(cause);
        for (Throwable c = cause.getCause(); c != null && seen.add(c); c = c.getCause()) {
            String text = String.valueOf(c);
            if (sb.indexOf(text) < 0) {
                sb.append(" (caused by ").append(text).append(')');
            }
        }
        return PeerText.escape(sb, 500);
    }
}
