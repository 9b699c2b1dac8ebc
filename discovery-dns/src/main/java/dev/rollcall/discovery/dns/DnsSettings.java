package dev.rollcall.discovery.dns;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * What the {@code dns} backend looks up and how often, read and checked from
 * {@code rollcall.discovery.dns.*}. Immutable and thread-safe.
 *
 * @param name        the absolute name to resolve, ending with a dot ({@code workers.example.com.})
 * @param recordType  {@link RecordType#A}, {@link RecordType#AAAA} or {@link RecordType#SRV}
 * @param port        the workers' port for A/AAAA; 0 for SRV (each record carries its own)
 * @param tls         whether workers are reached over TLS ({@code scheme=grpcs})
 * @param server      the DNS server to ask; empty: the system's resolvers
 * @param minInterval the shortest wait between two lookups, whatever the TTL says
 * @param maxInterval the longest wait between two lookups, whatever the TTL says
 * @param timeout     how long one question may go unanswered before the lookup counts as failed
 * @param lookupTimeout    how long one whole lookup may take, an SRV record's follow-up questions included
 * @param lookupTimeoutKey the full key of {@code lookupTimeout}, for the error that names it
 */
record DnsSettings(String name, RecordType recordType, int port, boolean tls, Optional<InetSocketAddress> server,
                   Duration minInterval, Duration maxInterval, Duration timeout, Duration lookupTimeout,
                   String lookupTimeoutKey) {

    /** The record types the backend reads. */
    enum RecordType { A, AAAA, SRV }

    static final String NAME = DnsKeys.relative(DnsKeys.NAME);
    static final String RECORD_TYPE = DnsKeys.relative(DnsKeys.RECORD_TYPE);
    static final String PORT = DnsKeys.relative(DnsKeys.PORT);
    static final String SCHEME = DnsKeys.relative(DnsKeys.SCHEME);
    static final String SERVER = DnsKeys.relative(DnsKeys.SERVER);
    static final String MIN_INTERVAL = DnsKeys.relative(DnsKeys.MIN_INTERVAL);
    static final String MAX_INTERVAL = DnsKeys.relative(DnsKeys.MAX_INTERVAL);
    static final String TIMEOUT = DnsKeys.relative(DnsKeys.TIMEOUT);
    static final String LOOKUP_TIMEOUT = DnsKeys.relative(DnsKeys.LOOKUP_TIMEOUT);

    /**
     * An SRV record's targets are looked up this many questions at a time: a lookup of N targets
     * takes about 2N/16 round trips instead of 2N sequential ones, without flooding the server.
     */
    static final int QUESTIONS_IN_FLIGHT = 16;
    static final int DEFAULT_DNS_PORT = 53;

    /**
     * Reads every key through its catalog declaration and checks them all.
     *
     * @throws ConfigurationException naming the first bad key and its value
     */
    static DnsSettings read(Settings s) {
        // Each value is checked against its own declaration as it is read; the checks across keys follow.
        Optional<String> nameText = s.find(DnsKeys.NAME);
        String typeText = s.get(DnsKeys.RECORD_TYPE);
        Optional<String> portText = s.find(DnsKeys.PORT);
        String schemeText = s.get(DnsKeys.SCHEME);
        Optional<String> serverText = s.find(DnsKeys.SERVER);
        Duration min = s.get(DnsKeys.MIN_INTERVAL);
        Duration max = s.get(DnsKeys.MAX_INTERVAL);
        Duration timeout = s.get(DnsKeys.TIMEOUT);
        Duration lookupTimeout = s.get(DnsKeys.LOOKUP_TIMEOUT);

        String name = nameText.orElseThrow(() -> ConfigurationException.missing(s.fullKey(NAME),
                "a DNS name such as workers.example.com or _grpc._tcp.workers.example.com"));
        if (name.length() > 254 || !name.matches("[A-Za-z0-9_.-]+") || name.startsWith(".") || name.contains("..")) {
            throw ConfigurationException.invalid(s.fullKey(NAME), name,
                    "a DNS name of letters, digits, '-', '_' and dots, such as _grpc._tcp.workers.example.com");
        }
        String absolute = name.endsWith(".") ? name : name + ".";

        RecordType type;
        try {
            type = RecordType.valueOf(typeText.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ConfigurationException.invalid(s.fullKey(RECORD_TYPE), typeText, "A, AAAA or SRV");
        }

        int port = 0;
        if (type == RecordType.SRV) {
            if (portText.isPresent()) {
                throw ConfigurationException.invalid(s.fullKey(PORT), portText.get(),
                        "no value with " + s.fullKey(RECORD_TYPE) + "=SRV (each SRV record names its own port)");
            }
        } else {
            if (portText.isEmpty()) {
                throw ConfigurationException.missing(s.fullKey(PORT), "the workers' port (1 to 65535), since "
                        + s.fullKey(RECORD_TYPE) + "=" + type + " records carry addresses only");
            }
            port = s.integer(PORT, 0, 1, 65535);
        }

        boolean tls = switch (schemeText.toLowerCase(Locale.ROOT)) {
            case "grpc", "http" -> false;
            case "grpcs", "https" -> true;
            default -> throw ConfigurationException.invalid(s.fullKey(SCHEME), schemeText,
                    "grpc (plaintext) or grpcs (TLS)");
        };

        Optional<InetSocketAddress> server = serverText.map(v -> parseServer(s.fullKey(SERVER), v));

        if (max.compareTo(min) < 0) {
            throw ConfigurationException.invalid(s.fullKey(MAX_INTERVAL), s.raw(MAX_INTERVAL).orElse(max.toString()),
                    "a duration no shorter than " + s.fullKey(MIN_INTERVAL) + " (" + min + ")");
        }
        if (lookupTimeout.compareTo(timeout) < 0) {
            throw ConfigurationException.invalid(s.fullKey(LOOKUP_TIMEOUT),
                    s.raw(LOOKUP_TIMEOUT).orElse(lookupTimeout.toString()),
                    "a duration no shorter than " + s.fullKey(TIMEOUT) + " (" + timeout + "): it bounds a whole lookup,"
                            + " " + s.fullKey(TIMEOUT) + " one question of it");
        }
        return new DnsSettings(absolute, type, port, tls, server, min, max, timeout, lookupTimeout,
                s.fullKey(LOOKUP_TIMEOUT));
    }

    /**
     * {@code 10.0.0.2}, {@code 10.0.0.2:5353}, {@code [::1]:5353}: an IP address, not a name, since
     * resolving the resolver's name would need a resolver.
     */
    static InetSocketAddress parseServer(String key, String value) {
        String expected = "the DNS server's IP address and optional port, such as 10.0.0.2:53 or [::1]:5353";
        String host;
        String portPart = null;
        if (value.startsWith("[")) {
            int close = value.indexOf(']');
            if (close < 0) {
                throw ConfigurationException.invalid(key, value, expected);
            }
            host = value.substring(1, close);
            String rest = value.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw ConfigurationException.invalid(key, value, expected);
                }
                portPart = rest.substring(1);
            }
        } else {
            int colon = value.lastIndexOf(':');
            if (colon >= 0 && value.indexOf(':') != colon) {
                throw ConfigurationException.invalid(key, value, expected + " (IPv6 in brackets)");
            }
            host = colon < 0 ? value : value.substring(0, colon);
            portPart = colon < 0 ? null : value.substring(colon + 1);
        }
        int port = DEFAULT_DNS_PORT;
        if (portPart != null) {
            try {
                port = Integer.parseInt(portPart);
            } catch (NumberFormatException e) {
                throw ConfigurationException.invalid(key, value, expected);
            }
            if (port < 1 || port > 65535) {
                throw ConfigurationException.invalid(key, value, expected + " (port 1 to 65535)");
            }
        }
        if (!host.matches("[0-9.]+") && !host.matches("[0-9A-Fa-f:.]+")) {
            throw ConfigurationException.invalid(key, value, expected + " ('" + host + "' is not an IP address)");
        }
        try {
            // An IP literal: InetAddress parses it without any lookup.
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw ConfigurationException.invalid(key, value, expected);
        }
    }

    /** How long a silent server may go unreported: the longest wait before a lookup, then the whole lookup. */
    Duration silenceBound() {
        return maxInterval.plus(lookupTimeout);
    }

    /** How long to wait before the next lookup when the answer's records live {@code ttlSeconds}. */
    Duration refreshDelay(long ttlSeconds) {
        Duration ttl = Duration.ofSeconds(Math.max(0, ttlSeconds));
        if (ttl.compareTo(minInterval) < 0) {
            return minInterval;
        }
        return ttl.compareTo(maxInterval) > 0 ? maxInterval : ttl;
    }

    /** The server as written in logs and messages: {@code 127.0.0.1:5353}, or {@code system resolvers}. */
    String serverText() {
        return server.map(a -> (a.getAddress().getHostAddress().indexOf(':') >= 0
                ? "[" + a.getAddress().getHostAddress() + "]" : a.getAddress().getHostAddress()) + ":" + a.getPort())
                .orElse("system resolvers");
    }

    /** E.g. {@code SRV _grpc._tcp.workers.example.com.} or {@code A workers.example.com. port 7001}. */
    String question() {
        return recordType + " " + name + (recordType == RecordType.SRV ? "" : " port " + port);
    }
}
