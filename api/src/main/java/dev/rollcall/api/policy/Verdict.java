package dev.rollcall.api.policy;

import java.util.Objects;

/**
 * A policy's decision about one worker: accepted, or rejected with a reason a person can read
 * ({@code "version 2.0.0 is outside ^1.4.0"}). Immutable.
 */
public record Verdict(boolean accepted, String reason) {

    private static final Verdict ACCEPTED = new Verdict(true, "");

    public Verdict {
        Objects.requireNonNull(reason, "reason");
        if (!accepted && reason.isBlank()) {
            throw new IllegalArgumentException("a rejection needs a reason");
        }
    }

    public static Verdict accept() {
        return ACCEPTED;
    }

    public static Verdict reject(String reason) {
        if (reason == null) {
            throw new IllegalArgumentException("a rejection needs a reason");
        }
        return new Verdict(false, reason);
    }
}
