package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a snapshot says of discovery: since when its candidates are stale, and why (discovery
 * failing, not answered since start-up, the cache file started from or not used). Each change is
 * logged here, once. Confined to the resolver's serial context, as the {@link FleetTracker} that
 * owns it.
 */
final class DiscoveryHealth {

    /** Logs as the tracker did: users set the level of {@code FleetTracker}. */
    private static final Logger log = LoggerFactory.getLogger(FleetTracker.class);

    private Instant staleSince;
    /** Why discovery is failing (this outage's first cause), or null while it is healthy. */
    private String discoveryProblem;
    /** Why the cache file was not started from, until discovery answers; null when it was, or none is kept. */
    private String cacheProblem;

    /** Discovery delivered a set: returns whether a snapshot now shows something else (it recovered, or the cache's problem goes). */
    boolean answered() {
        boolean changed = false;
        if (staleSince != null) {
            log.info("discovery recovered; candidates are current again");
            staleSince = null;
            discoveryProblem = null;
            changed = true;
        }
        if (cacheProblem != null) {
            cacheProblem = null; // discovery's set is what counts now
            changed = true;
        }
        return changed;
    }

    /**
     * Discovery failed at {@code now}: returns whether that is news (the first failure of an
     * outage; later ones are logged at DEBUG and change nothing a snapshot shows).
     * {@code answeredBefore}: whether discovery delivered a set since start-up; {@code kept}: the
     * candidates kept meanwhile.
     */
    boolean failed(Throwable cause, Instant now, boolean answeredBefore, int kept) {
        if (staleSince != null) {
            log.debug("discovery still failing", cause);
            return false;
        }
        staleSince = now;
        String why = DiscoveryFailure.describe(cause);
        if (answeredBefore) {
            discoveryProblem = "discovery failing since " + staleSince + ": " + why;
            log.warn("discovery failed; keeping the last {} candidates until it recovers: {}", kept, why);
        } else {
            discoveryProblem = "discovery has not answered since start-up: " + why;
            log.warn("discovery has not answered since start-up: {}", why);
        }
        return true;
    }

    /** The cache file at {@code file} was not started from, for {@code problem} (the file's own words: escaped here). */
    void cacheNotUsed(Path file, String problem) {
        // The snapshot says why, as the WARN did: a reader of a snapshot without candidates asks.
        cacheProblem = "candidate cache " + file + " not used: " + PeerText.escape(problem, 300);
    }

    /** The {@code candidates} of the cache file at {@code file}, written at {@code writtenAt}, are started from. */
    void startedFromCache(Path file, Instant writtenAt, int candidates, Duration maxWait) {
        log.warn("discovery has not answered within {}; starting from the {} last-known-good candidates in {}, "
                + "written {}", maxWait, candidates, file, writtenAt);
        staleSince = writtenAt;
        discoveryProblem = "discovery has not answered since start-up; serving the last-known-good candidates"
                + " of " + file + ", written " + writtenAt;
    }

    /** Since when the candidates are stale; null while discovery is healthy. */
    Instant staleSince() {
        return staleSince;
    }

    /** Discovery's problem and the cache file's, as the snapshot tells them; null when neither has one. */
    String problem() {
        if (cacheProblem == null) {
            return discoveryProblem;
        }
        return discoveryProblem == null ? cacheProblem : discoveryProblem + "; " + cacheProblem;
    }
}
