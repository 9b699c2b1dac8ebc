package dev.rollcall.api.registry;

import java.util.List;

/**
 * Read-only view: {@code (service, handler)} → the compatible workers that offer it, and whether a
 * caller may call it.
 *
 * <p>Visibility is declared per service and may be overridden per handler (see
 * {@link dev.rollcall.api.Visibility}); a lookup names its {@link Caller} and gets only what that
 * caller may reach, or an error that says which of four things went wrong. Every method answers
 * from one immutable snapshot; implementations are thread-safe and never block.
 */
public interface InvocationTargets {

    /** Every target that compatible workers offer, ordered by service then handler. */
    List<InvocationTarget> targets();

    /**
     * The workers that offer {@code handler} of {@code service} and let {@code caller} in.
     *
     * @return a target with at least one worker
     * @throws TargetLookupException naming the service and handler, with its
     *         {@link TargetLookupException#reason() reason}: {@code NOT_FOUND} (no worker offers it),
     *         {@code NOT_PUBLIC} (the ingress asked for an internal-only target), {@code NOT_INTERNAL}
     *         (a service asked for an external-only target), {@code NO_COMPATIBLE_WORKER} (only
     *         rejected or unreachable workers offer it)
     */
    InvocationTarget target(String service, String handler, Caller caller);
}
