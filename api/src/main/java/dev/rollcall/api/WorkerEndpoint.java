package dev.rollcall.api;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Where a worker listens: a host, a port and whether to speak TLS, plus labels a discovery backend
 * knows about it (zone, node, tags).
 *
 * <p>Written {@code grpc://host:port} (plaintext) or {@code grpcs://host:port} (TLS);
 * {@code http} and {@code https} are accepted as synonyms. IPv6 hosts are written in brackets
 * ({@code grpc://[::1]:7001}). {@link #url()} is the canonical form and the endpoint's identity in
 * the resolver: two endpoints with the same URL and different labels are the same worker, and the
 * labels of the latest candidate set win.
 *
 * <p>Immutable and thread-safe. A value class rather than a record so that its URL and hash are
 * computed once, when it is made: the resolver looks endpoints up by URL for every probe answer and
 * every snapshot, so building the string each time would be paid per worker per snapshot.
 */
public final class WorkerEndpoint {

    /**
     * A label by which a discovery backend says which process is registered at this address (etcd
     * and Consul registrations, a Kubernetes pod's uid). When it changes between candidate sets, the
     * worker restarted in place: the resolver takes it out of use and probes it again at once, even
     * without a kept connection.
     */
    public static final String INSTANCE_ID_LABEL = "rollcall.instance-id";

    /**
     * A label by which a discovery backend says which version the worker runs, as its registry
     * holds it: a Kubernetes pod's {@code app.kubernetes.io/version}, a Consul service's
     * {@code meta.version}, the {@code version} of an etcd value or of a ZooKeeper payload.
     *
     * <p>It is a <em>claim</em>, not verified: whoever registered the worker wrote it, and nothing
     * checks that the process at this address runs that version. When a probe also answers, the
     * answer wins. A backend sets the label only to a value {@link #versionLabelProblem} accepts
     * (at most {@value #MAX_VERSION_CHARS} characters, no white space or control characters) and
     * leaves out a candidate whose registry holds another, naming it; an absent or empty value means
     * no claim, and the label is not set.
     */
    public static final String VERSION_LABEL = "rollcall.version";

    /**
     * A label by which discovery says what a worker can do, for probe protocols whose worker does
     * not say it itself ({@code grpc-health}, {@code none}): a comma-separated list as
     * {@link Capabilities#parse} reads it, e.g. {@code udf:geo_distance, datafusion=55.0.1}. Like
     * {@link #VERSION_LABEL} it is a <em>claim</em> of whoever wrote discovery, not checked by the
     * worker; a value that is not such a list leaves the worker out, naming the label.
     */
    public static final String CAPABILITIES_LABEL = "rollcall.capabilities";

    /** The longest {@link #VERSION_LABEL} value: the bound a probed version has too. */
    public static final int MAX_VERSION_CHARS = 256;

    /**
     * A label by which a discovery backend says a worker is on its way out, value
     * {@value #STATE_DRAINING} (a terminating Kubernetes pod that still serves): the resolver treats
     * it as {@code DRAINING} whatever the worker itself says.
     */
    public static final String STATE_LABEL = "rollcall.state";

    /** The value of {@link #STATE_LABEL} for a worker that drains. */
    public static final String STATE_DRAINING = "draining";

    /** The longest host: a DNS name is at most 253 characters. */
    public static final int MAX_HOST_CHARS = 253;

    /** How much of a refused version {@link #versionLabelProblem} shows. */
    private static final int MAX_SHOWN_VERSION_CHARS = 64;

    /** How much of the labels {@link #toString()} shows. */
    private static final int MAX_SHOWN_LABEL_CHARS = 1024;

    private final String host;
    private final int port;
    private final boolean tls;
    private final Map<String, String> labels;
    private final String url;
    private final int hash;

    /**
     * An endpoint from its parts.
     *
     * @param host   a host name or IP literal; brackets around IPv6 are removed and names lower-cased
     * @param port   1 to 65535
     * @param tls    whether the worker is reached over TLS
     * @param labels facts from the discovery backend; never null, may be empty
     * @throws IllegalArgumentException naming the empty host, a host longer than
     *         {@value #MAX_HOST_CHARS} characters or with a character no host name or IP literal has
     *         (only letters, digits, {@code - . _ :}; shown escaped), a host that {@link #parse} would
     *         refuse in the URL (an IPv6 zone id, a name starting with {@code -} or {@code .}), or the
     *         port out of range
     */
    public WorkerEndpoint(String host, int port, boolean tls, Map<String, String> labels) {
        Objects.requireNonNull(host, "host");
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("worker endpoint host is empty");
        }
        // The host is part of the URL, the worker's name in every log line and status: a backend's
        // value must not bring a line break or a terminal escape into it.
        if (host.length() > MAX_HOST_CHARS) {
            throw new IllegalArgumentException("worker endpoint host " + quote(host) + " is " + host.length()
                    + " characters long (at most " + MAX_HOST_CHARS + ")");
        }
        if (!host.chars().allMatch(WorkerEndpoint::isHostChar)) {
            throw new IllegalArgumentException("worker endpoint host " + quote(host)
                    + " has a character that no host name or IP address has");
        }
        // The URL is the identity that caches, logs and peers read back with parse(): a host it
        // would refuse (a colon outside IPv6, a leading dot or dash) would not survive the trip.
        if (host.indexOf(':') >= 0 ? !isIpv6(host) : !isHostName(host)) {
            throw new IllegalArgumentException("worker endpoint host " + quote(host)
                    + " is not a host name, an IPv4 address or an IPv6 address");
        }
        // One worker, one identity: host names are case-insensitive.
        host = host.toLowerCase(Locale.ROOT);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                    "worker endpoint port " + port + " for host '" + host + "' is outside 1..65535");
        }
        this.host = host;
        this.port = port;
        this.tls = tls;
        this.labels = Map.copyOf(Objects.requireNonNull(labels, "labels"));
        this.url = (tls ? "grpcs://" : "grpc://") + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        this.hash = 31 * url.hashCode() + this.labels.hashCode();
    }

    /** The host name or IP literal (IPv6 without brackets), lower-cased. */
    public String host() {
        return host;
    }

    /** The port, 1 to 65535. */
    public int port() {
        return port;
    }

    /** Whether the worker is reached over TLS ({@code grpcs://}). */
    public boolean tls() {
        return tls;
    }

    /** Facts from the discovery backend; never null, may be empty. */
    public Map<String, String> labels() {
        return labels;
    }

    /** Equal when URL and labels are equal. */
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof WorkerEndpoint e && hash == e.hash && url.equals(e.url)
                && labels.equals(e.labels);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** A plaintext endpoint without labels. */
    public static WorkerEndpoint of(String host, int port) {
        return new WorkerEndpoint(host, port, false, Map.of());
    }

    /**
     * Parses {@code grpc://host:port}, {@code grpcs://host:port} or their {@code http}/{@code https}
     * synonyms. A trailing {@code /} is tolerated; a path, query, fragment or user info is not (the
     * message shows user info as {@code ***@}, never the user or password, and quotes no part of a
     * text that has one; see {@link PeerText#maskUserInfo}). The message shows the text escaped and
     * bounded as {@link PeerText#escape(CharSequence)} does: it may come from a backend or a peer.
     * Hosts are names (letters, digits, {@code - . _}), IPv4 addresses, or IPv6 addresses in
     * brackets.
     *
     * @throws IllegalArgumentException naming the text and what is wrong with it
     */
    public static WorkerEndpoint parse(String text) {
        Objects.requireNonNull(text, "endpoint");
        String trimmed = text.strip();
        if (trimmed.isEmpty()) {
            throw invalid(text, "it is empty");
        }
        for (int i = 0; i < trimmed.length(); i++) {
            char c = trimmed.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw invalid(text, "it contains white space or a control character");
            }
            if (c > 0x7e) {
                throw invalid(text, "it contains a non-ASCII character (write the host as punycode or an IP)");
            }
        }
        // Before anything that quotes a part of the text: with user info, any part may hold the password.
        if (trimmed.indexOf('@') >= 0) {
            throw invalid(text, "it carries user info");
        }
        int sep = trimmed.indexOf("://");
        if (sep < 0) {
            throw invalid(text, "it has no scheme; expected grpc://host:port or grpcs://host:port");
        }
        String scheme = trimmed.substring(0, sep);
        boolean tls = switch (scheme.toLowerCase(Locale.ROOT)) {
            case "grpc", "http" -> false;
            case "grpcs", "https" -> true;
            default -> throw invalid(text, "scheme " + quote(scheme) + " is not one of grpc, grpcs, http, https");
        };
        String authority = trimmed.substring(sep + 3);
        if (authority.endsWith("/")) {
            authority = authority.substring(0, authority.length() - 1);
        }
        int junk = indexOfAny(authority, "/?#");
        if (junk >= 0) {
            String what = switch (authority.charAt(junk)) {
                case '/' -> "path";
                case '?' -> "query";
                default -> "fragment";
            };
            throw invalid(text, "it has a " + what + " (" + quote(authority.substring(junk)) + ")");
        }
        if (authority.isEmpty()) {
            throw invalid(text, "it has no host");
        }
        String host;
        String port;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw invalid(text, "its IPv6 address has no closing ']'");
            }
            host = authority.substring(1, close);
            String rest = authority.substring(close + 1);
            if (rest.isEmpty()) {
                throw invalid(text, "it has no port");
            }
            if (!rest.startsWith(":")) {
                throw invalid(text, "unexpected " + quote(rest) + " after the IPv6 address");
            }
            port = rest.substring(1);
            if (!isIpv6(host)) {
                throw invalid(text, quote(host) + " is not an IPv6 address");
            }
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon < 0) {
                throw invalid(text, "it has no port");
            }
            host = authority.substring(0, colon);
            port = authority.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw invalid(text, "IPv6 addresses go in brackets: grpc://[::1]:7001");
            }
            if (host.isEmpty()) {
                throw invalid(text, "it has no host");
            }
            if (!isHostName(host)) {
                throw invalid(text, quote(host) + " is not a valid host name or IPv4 address");
            }
        }
        if (host.length() > MAX_HOST_CHARS) {
            throw invalid(text, "its host is " + host.length() + " characters long (at most " + MAX_HOST_CHARS + ")");
        }
        if (port.isEmpty()) {
            throw invalid(text, "it has no port");
        }
        if (port.length() > 9 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw invalid(text, "port " + quote(port) + " is not a number from 1 to 65535");
        }
        int p = Integer.parseInt(port);
        if (p < 1 || p > 65535) {
            throw invalid(text, "port " + p + " is outside 1..65535");
        }
        return new WorkerEndpoint(host, p, tls, Map.of());
    }

    /**
     * What is wrong with {@code claimed} as the value of {@link #VERSION_LABEL}, or {@code null}
     * when a backend may set it: longer than {@value #MAX_VERSION_CHARS} characters, or holding
     * white space or a character {@link PeerText} escapes. The reason quotes at most 64 characters of
     * the value, escaped as {@link PeerText} does (a registry wrote it); the caller adds
     * which candidate and which key. Pure; thread-safe.
     *
     * @param claimed the value a registry holds; not null (an empty one is no claim: do not ask)
     */
    public static String versionLabelProblem(String claimed) {
        Objects.requireNonNull(claimed, "claimed");
        if (claimed.isEmpty()) {
            return "the version is empty";
        }
        // The length first and the value cut short: a caller's log line bounds the whole reason.
        String shown = "'" + PeerText.escape(claimed, MAX_SHOWN_VERSION_CHARS) + "'";
        if (claimed.length() > MAX_VERSION_CHARS) {
            return "the version is " + claimed.length() + " characters long (at most " + MAX_VERSION_CHARS + "): "
                    + shown;
        }
        if (!PeerText.isClean(claimed) || claimed.chars().anyMatch(Character::isWhitespace)) {
            return "the version " + shown + " holds white space or a control character";
        }
        return null;
    }

    private static boolean isHostChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == ':';
    }

    /** A part of a text from outside, quoted, escaped and bounded as {@link PeerText} does. */
    private static String quote(String part) {
        return "'" + PeerText.escape(part) + "'";
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isHostName(String host) {
        if (host.startsWith("-") || host.startsWith(".") || host.endsWith("-") || host.contains("..")) {
            return false;
        }
        return host.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_');
    }

    private static boolean isIpv6(String host) {
        // Hex groups, colons, and an optional dotted IPv4 tail; a zone id ("%eth0") is not supported.
        return host.indexOf(':') >= 0 && host.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.');
    }

    /** The canonical URL, {@code grpc://host:port} or {@code grpcs://host:port}: this endpoint's identity. */
    public String url() {
        return url;
    }

    /** This endpoint with other labels. */
    public WorkerEndpoint withLabels(Map<String, String> newLabels) {
        return new WorkerEndpoint(host, port, tls, newLabels);
    }

    /** The URL, then the labels (escaped and bounded as {@link PeerText} does: a backend wrote them). */
    @Override
    public String toString() {
        return labels.isEmpty() ? url() : url() + " " + PeerText.escape(labels.toString(), MAX_SHOWN_LABEL_CHARS);
    }

    /** The text as {@link PeerText} shows it, user info masked: it may come from a backend, a file or a peer. */
    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException("invalid worker endpoint '" + PeerText.escape(PeerText.maskUserInfo(text))
                + "': " + why);
    }
}
