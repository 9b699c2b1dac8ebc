package dev.rollcall.server.xds;

/** Reads the ClusterLoadAssignment versions the ADS door sends, {@code N/instanceId}. */
final class Versions {

    private Versions() {
    }

    /** {@code N} of {@code N/instanceId}. */
    static long number(String version) {
        return Long.parseLong(version.substring(0, version.indexOf('/')));
    }

    /** {@code instanceId} of {@code N/instanceId}. */
    static String instance(String version) {
        return version.substring(version.indexOf('/') + 1);
    }
}
