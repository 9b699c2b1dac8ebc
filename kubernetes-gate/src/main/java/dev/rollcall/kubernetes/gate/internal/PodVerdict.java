package dev.rollcall.kubernetes.gate.internal;

import java.util.Objects;

/**
 * What the gate wishes one worker pod to carry, from the resolver's verdict on it: its readiness gate
 * condition and, when {@code pod-deletion-cost} is on, its deletion cost. Immutable.
 *
 * @param pod       the pod's name (its namespace is the service's)
 * @param uid       the pod's UID as discovery reported it ({@code ""} when unknown): a wish is never
 *                  written to another pod that took the same name
 * @param condition what to do with the condition
 * @param reason    the condition's {@code reason}: one CamelCase word ({@code Compatible},
 *                  {@code CountsTowardCohort}, {@code VersionAccepted}, {@code Incompatible},
 *                  {@code NotVerified})
 * @param message   the condition's {@code message}: the resolver's words, escaped and bounded
 * @param cost      what to do with the deletion cost annotation
 */
public record PodVerdict(String pod, String uid, Condition condition, String reason, String message, Cost cost) {

    /** The most characters of a condition's message: a policy's reason is short; a peer's text is cut. */
    public static final int MAX_MESSAGE_CHARS = 512;

    public PodVerdict {
        Objects.requireNonNull(pod, "pod");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(cost, "cost");
    }

    /** The condition's wished status. */
    public enum Condition {
        /** {@code True}: verified compatible, or counting toward the next cohort of a rollout. */
        TRUE,
        /** {@code False}: the policy rejects the pod's version. */
        FALSE,
        /**
         * {@code False} only where the condition is not {@code True} yet: a pod not verified yet (not
         * answered, not serving) waits, but a verified pod that goes silent keeps its {@code True}.
         * Whether its process lives is the kubelet's readiness probe's to say; Rollcall's gate says
         * whether its version is one the coordinators use, so that Rollcall losing its own network
         * cannot take a whole fleet out of every Service.
         */
        FALSE_UNLESS_TRUE,
        /** Leave it as it is (a draining pod: it is going anyway). */
        UNCHANGED
    }

    /** The deletion cost wished ({@code controller.kubernetes.io/pod-deletion-cost}). */
    public enum Cost {
        /** Leave the annotation as it is ({@code pod-deletion-cost} off). */
        UNCHANGED(null),
        /** No annotation: the default cost 0, a pod of the chosen cohort. */
        CLEAR(null),
        /** Outside the chosen cohort, rejected or not verified: before the chosen cohort's pods. */
        OUTSIDE("-100"),
        /** Draining: first of all. */
        DRAINING("-200");

        private final String value;

        Cost(String value) {
            this.value = value;
        }

        /** The annotation's value, or null for none. */
        public String value() {
            return value;
        }
    }
}
