package dev.rollcall.api.registry;

/**
 * How the candidates of one snapshot split up. Immutable.
 *
 * @param candidates  every endpoint discovery reported
 * @param compatible  answered and accepted by the policy
 * @param rejected    answered and rejected by the policy (by version)
 * @param unreachable did not answer
 * @param pending     not probed yet
 */
public record FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending) {

    @Override
    public String toString() {
        return candidates + " candidates: " + compatible + " compatible, " + rejected + " rejected by version, "
                + unreachable + " unreachable, " + pending + " pending";
    }
}
