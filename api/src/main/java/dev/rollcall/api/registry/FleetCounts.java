package dev.rollcall.api.registry;

/**
 * How the candidates of one snapshot split up. Immutable.
 *
 * @param candidates  every endpoint discovery reported
 * @param compatible  answered and accepted by the policy
 * @param rejected    answered and rejected by the policy (by version)
 * @param unreachable did not answer
 * @param pending     not probed yet
 * @param draining    answered, finishing its work and taking no new work
 * @param notServing  answered, not ready yet
 * @param overKeptCap of all the candidates, how many are tracked without a kept probe channel because
 *                    {@code rollcall.probe.max-kept-channels} was reached (probed over a connection
 *                    of their own each time, a restart noticed by instance id at the next probe);
 *                    not a state: these workers are counted in the others too
 * @param outsideSubset answered and accepted by the policy, but not in this coordinator's subset
 *                      ({@code rollcall.subset.size}): used by other coordinators, not by this one;
 *                      0 without subsets
 * @param lacksRequirement answered and accepted by the policy, but lacking what the query this
 *                         snapshot was narrowed for requires ({@link FleetSnapshot#requiring}); 0 in a
 *                         snapshot the resolver publishes
 */
public record FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending, int draining,
                          int notServing, int overKeptCap, int outsideSubset, int lacksRequirement) {

    /** Counts of a snapshot not narrowed by requirements. */
    public FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending, int draining,
                       int notServing, int overKeptCap, int outsideSubset) {
        this(candidates, compatible, rejected, unreachable, pending, draining, notServing, overKeptCap, outsideSubset, 0);
    }

    /** Counts without subsets: no worker outside the subset. */
    public FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending, int draining,
                       int notServing, int overKeptCap) {
        this(candidates, compatible, rejected, unreachable, pending, draining, notServing, overKeptCap, 0);
    }

    /** Counts with no worker past the kept-channel cap. */
    public FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending, int draining,
                       int notServing) {
        this(candidates, compatible, rejected, unreachable, pending, draining, notServing, 0);
    }

    /** Counts without draining or not-serving workers. */
    public FleetCounts(int candidates, int compatible, int rejected, int unreachable, int pending) {
        this(candidates, compatible, rejected, unreachable, pending, 0, 0);
    }

    @Override
    public String toString() {
        return candidates + " candidates: " + compatible + " compatible, " + rejected + " rejected by version, "
                + unreachable + " unreachable, " + pending + " pending"
                + (draining == 0 ? "" : ", " + draining + " draining")
                + (notServing == 0 ? "" : ", " + notServing + " not serving")
                + (outsideSubset == 0 ? "" : ", " + outsideSubset + " outside this coordinator's subset")
                + (lacksRequirement == 0 ? "" : ", " + lacksRequirement + " lacking a requirement")
                + (overKeptCap == 0 ? "" : "; " + overKeptCap + " without a kept channel (over rollcall.probe.max-kept-channels)");
    }
}
