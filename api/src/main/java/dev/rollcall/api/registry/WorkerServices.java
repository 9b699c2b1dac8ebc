package dev.rollcall.api.registry;

import dev.rollcall.api.WorkerInfo;
import java.util.List;
import java.util.SortedSet;

/**
 * Read-only view: which services the compatible workers offer, and who offers each.
 *
 * <p>Only compatible workers count: a service that only rejected or unreachable workers offer is
 * not listed. Every method answers from one immutable snapshot; implementations are thread-safe
 * and never block.
 */
public interface WorkerServices {

    /** The names of the services at least one compatible worker offers, sorted. */
    SortedSet<String> services();

    /** The compatible workers that offer {@code service}, ordered by URL; empty when none does. */
    List<WorkerInfo> workersOffering(String service);
}
