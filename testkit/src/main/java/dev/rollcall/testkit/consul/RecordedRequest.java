package dev.rollcall.testkit.consul;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One HTTP request as {@link ConsulStandIn} received it, before any ACL check.
 *
 * @param method  {@code GET}, {@code PUT}, ...
 * @param path    the decoded path, e.g. {@code /v1/health/service/workers}
 * @param query   the raw query string, {@code ""} when there is none
 * @param headers the request headers, names lower-cased
 * @param at      when it arrived
 * @param body    the request body as UTF-8 text, {@code ""} when there is none
 */
public record RecordedRequest(String method, String path, String query, Map<String, List<String>> headers,
                              Instant at, String body) {

    public RecordedRequest {
        Map<String, List<String>> copy = new TreeMap<>();
        headers.forEach((k, v) -> copy.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
        headers = Map.copyOf(copy);
    }

    /** The first value of a header (any case), if sent. */
    public Optional<String> header(String name) {
        List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    /** Every value of a query parameter, decoded; a parameter without a value ({@code ?passing}) gives {@code ""}. */
    public List<String> queryParameter(String name) {
        List<String> values = new ArrayList<>();
        if (query.isEmpty()) {
            return values;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (key.equals(name)) {
                values.add(eq < 0 ? "" : decode(pair.substring(eq + 1)));
            }
        }
        return values;
    }

    /** The ACL token carried by the {@code X-Consul-Token} header, if any. */
    public Optional<String> tokenHeader() {
        return header("X-Consul-Token");
    }

    /** Whether a token travelled in the URL ({@code ?token=}), where proxies and access logs keep it. */
    public boolean tokenInUrl() {
        return !queryParameter("token").isEmpty();
    }

    static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return method + " " + path + (query.isEmpty() ? "" : "?" + query.replaceAll("token=[^&]*", "token=****"));
    }
}
