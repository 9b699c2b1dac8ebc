package dev.rollcall.api.registry;

import java.util.Comparator;

/**
 * Orders version strings the way semantic versioning does, leniently: dot-separated parts compare
 * numerically when both are numbers, else as text; a pre-release ({@code 2.0.0-rc.1}) comes before
 * its release; build metadata ({@code +abc}) is ignored, then breaks ties as text. Total, so
 * that "the newest version" is always defined, even for versions that are not semver. (The api
 * module depends on nothing; the policies use semver4j for the real rules.)
 */
final class VersionOrder implements Comparator<String> {

    static final VersionOrder INSTANCE = new VersionOrder();

    private VersionOrder() {
    }

    @Override
    public int compare(String a, String b) {
        String ca = stripBuild(a);
        String cb = stripBuild(b);
        int dashA = ca.indexOf('-');
        int dashB = cb.indexOf('-');
        String mainA = dashA < 0 ? ca : ca.substring(0, dashA);
        String mainB = dashB < 0 ? cb : cb.substring(0, dashB);
        int c = compareDotted(mainA, mainB);
        if (c != 0) {
            return c;
        }
        if (dashA < 0 || dashB < 0) {
            c = Boolean.compare(dashA < 0, dashB < 0); // a release is newer than its pre-releases
        } else {
            c = compareDotted(ca.substring(dashA + 1), cb.substring(dashB + 1));
        }
        return c != 0 ? c : a.compareTo(b);
    }

    private static String stripBuild(String v) {
        String s = v.startsWith("v") || v.startsWith("V") ? v.substring(1) : v;
        int plus = s.indexOf('+');
        return plus < 0 ? s : s.substring(0, plus);
    }

    private static int compareDotted(String a, String b) {
        String[] pa = a.split("\\.", -1);
        String[] pb = b.split("\\.", -1);
        for (int i = 0; i < Math.max(pa.length, pb.length); i++) {
            if (i >= pa.length) {
                return -1;
            }
            if (i >= pb.length) {
                return 1;
            }
            int c = compareIdentifier(pa[i], pb[i]);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static int compareIdentifier(String a, String b) {
        if (a.isEmpty() || b.isEmpty()) {
            return Boolean.compare(!a.isEmpty(), !b.isEmpty()); // nothing (an unset version) comes first
        }
        boolean na = isNumber(a);
        boolean nb = isNumber(b);
        if (na && nb) {
            String ta = a.replaceFirst("^0+(?=.)", "");
            String tb = b.replaceFirst("^0+(?=.)", "");
            return ta.length() != tb.length() ? Integer.compare(ta.length(), tb.length()) : ta.compareTo(tb);
        }
        if (na != nb) {
            return na ? -1 : 1; // numbers before words, as semver orders pre-release identifiers
        }
        return a.compareTo(b);
    }

    private static boolean isNumber(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
