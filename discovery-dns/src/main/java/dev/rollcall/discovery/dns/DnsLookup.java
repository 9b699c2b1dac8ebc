package dev.rollcall.discovery.dns;

import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.discovery.dns.DnsSettings.RecordType;
import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedResolver;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Resolver;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * One lookup of the configured name: the question, the answer's records turned into endpoints, and
 * the TTL that says when to ask again. For SRV, each target is looked up too (A and AAAA, on the
 * same server; the answer's additional section is used when it already has them), so that
 * endpoints carry addresses the probes can reach without another resolver.
 *
 * <p>Blocking, bounded by the settings' {@code timeout} per question. Not thread-safe: the
 * discovery's loop thread owns it.
 */
final class DnsLookup {

    /** The labels an SRV record's endpoints carry. */
    static final String PRIORITY_LABEL = "srv.priority";
    static final String WEIGHT_LABEL = "srv.weight";
    static final String TARGET_LABEL = "srv.target";

    /**
     * What one lookup found.
     *
     * @param endpoints  the workers, possibly none (the server said the name has no such records)
     * @param ttlSeconds the shortest TTL among the records used (or the negative-caching TTL)
     * @param skipped    one line per record that could not be used, naming the record and why
     */
    record Answer(Set<WorkerEndpoint> endpoints, long ttlSeconds, List<String> skipped) {
    }

    /** The server did not give a usable answer: NXDOMAIN, SERVFAIL, REFUSED, or no answer in time. */
    static final class LookupFailedException extends Exception {
        private static final long serialVersionUID = 1L;

        LookupFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final DnsSettings settings;
    private final Resolver resolver;
    private final Name name;

    DnsLookup(DnsSettings settings) {
        this.settings = settings;
        Resolver r;
        if (settings.server().isPresent()) {
            r = new SimpleResolver(settings.server().get());
        } else {
            r = new ExtendedResolver(); // the system's resolvers (resolv.conf and the like)
        }
        r.setTimeout(settings.timeout());
        this.resolver = r;
        try {
            this.name = Name.fromString(settings.name());
        } catch (TextParseException e) {
            throw new IllegalArgumentException("not a DNS name: " + settings.name(), e); // DnsSettings checked it
        }
    }

    Answer lookup() throws LookupFailedException, InterruptedException {
        RecordType type = settings.recordType();
        int qtype = switch (type) {
            case A -> Type.A;
            case AAAA -> Type.AAAA;
            case SRV -> Type.SRV;
        };
        Message response = ask(name, qtype);
        List<Record> answers = response.getSection(Section.ANSWER);
        long ttl = Long.MAX_VALUE;
        Set<WorkerEndpoint> endpoints = new LinkedHashSet<>();
        List<String> skipped = new ArrayList<>();
        if (type == RecordType.SRV) {
            Map<Name, List<InetAddress>> additional = addresses(response.getSection(Section.ADDITIONAL));
            for (Record r : answers) {
                if (r instanceof SRVRecord srv) {
                    ttl = Math.min(ttl, srv.getTTL());
                    ttl = Math.min(ttl, addSrv(srv, additional, endpoints, skipped));
                }
            }
        } else {
            for (Record r : answers) {
                InetAddress address = r instanceof ARecord a ? a.getAddress()
                        : r instanceof AAAARecord aaaa ? aaaa.getAddress() : null;
                if (address != null && r.getType() == qtype) {
                    ttl = Math.min(ttl, r.getTTL());
                    endpoints.add(new WorkerEndpoint(host(address), settings.port(), settings.tls(), Map.of()));
                }
            }
        }
        if (ttl == Long.MAX_VALUE) {
            ttl = negativeTtl(response);
        }
        return new Answer(Set.copyOf(endpoints), ttl, List.copyOf(skipped));
    }

    /** Adds the endpoints of one SRV record; returns the shortest TTL of the target's addresses. */
    private long addSrv(SRVRecord srv, Map<Name, List<InetAddress>> additional, Set<WorkerEndpoint> endpoints,
                        List<String> skipped) throws LookupFailedException, InterruptedException {
        String source = "SRV record '" + srv.rdataToString() + "' of " + settings.name();
        if (srv.getTarget().equals(Name.root)) {
            return Long.MAX_VALUE; // RFC 2782: "." means the service is decidedly not available there
        }
        if (srv.getPort() < 1 || srv.getPort() > 65535) {
            skipped.add(source + ": port " + srv.getPort() + " is outside 1..65535");
            return Long.MAX_VALUE;
        }
        long ttl = Long.MAX_VALUE;
        List<InetAddress> addresses = additional.get(srv.getTarget());
        if (addresses == null) {
            addresses = new ArrayList<>();
            for (int qtype : new int[] {Type.A, Type.AAAA}) {
                Message m = askTarget(srv.getTarget(), qtype, source);
                if (m == null) {
                    continue;
                }
                for (Record r : m.getSection(Section.ANSWER)) {
                    if (r instanceof ARecord a) {
                        addresses.add(a.getAddress());
                        ttl = Math.min(ttl, r.getTTL());
                    } else if (r instanceof AAAARecord aaaa) {
                        addresses.add(aaaa.getAddress());
                        ttl = Math.min(ttl, r.getTTL());
                    }
                }
            }
        }
        if (addresses.isEmpty()) {
            skipped.add(source + ": its target " + srv.getTarget() + " has no A or AAAA record");
            return ttl;
        }
        String target = srv.getTarget().toString(true);
        Map<String, String> labels = Map.of(PRIORITY_LABEL, Integer.toString(srv.getPriority()),
                WEIGHT_LABEL, Integer.toString(srv.getWeight()), TARGET_LABEL, target);
        for (InetAddress address : addresses) {
            endpoints.add(new WorkerEndpoint(host(address), srv.getPort(), settings.tls(), labels));
        }
        return ttl;
    }

    /** A target's A or AAAA answer; null when the target does not exist (NXDOMAIN), which skips only that record. */
    private Message askTarget(Name target, int qtype, String source) throws LookupFailedException, InterruptedException {
        Message query = Message.newQuery(Record.newRecord(target, qtype, DClass.IN));
        Message m = send(query, Type.string(qtype) + " " + target + " (target of " + source + ")");
        int rcode = m.getRcode();
        if (rcode == Rcode.NXDOMAIN) {
            return null;
        }
        if (rcode != Rcode.NOERROR) {
            throw new LookupFailedException(Type.string(qtype) + " " + target + " (target of " + source + "): "
                    + Rcode.string(rcode) + " from " + settings.serverText(), null);
        }
        return m;
    }

    /** The answer to {@code qtype name}, which must be NOERROR: anything else is a failure, never an empty set. */
    private Message ask(Name n, int qtype) throws LookupFailedException, InterruptedException {
        Message m = send(Message.newQuery(Record.newRecord(n, qtype, DClass.IN)), settings.question());
        int rcode = m.getRcode();
        if (rcode != Rcode.NOERROR) {
            String meaning = rcode == Rcode.NXDOMAIN ? " (the name does not exist)"
                    : rcode == Rcode.SERVFAIL ? " (the server could not answer)" : "";
            throw new LookupFailedException(settings.question() + ": " + Rcode.string(rcode) + meaning + " from "
                    + settings.serverText(), null);
        }
        return m;
    }

    private Message send(Message query, String what) throws LookupFailedException, InterruptedException {
        try {
            return resolver.send(query);
        } catch (IOException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("closed during a DNS lookup");
            }
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            throw new LookupFailedException(what + ": no answer from " + settings.serverText() + " within "
                    + settings.timeout().toMillis() + " ms (" + reason + ")", e);
        }
    }

    private static Map<Name, List<InetAddress>> addresses(List<Record> records) {
        Map<Name, List<InetAddress>> byName = new LinkedHashMap<>();
        for (Record r : records) {
            if (r instanceof ARecord a) {
                byName.computeIfAbsent(r.getName(), k -> new ArrayList<>()).add(a.getAddress());
            } else if (r instanceof AAAARecord aaaa) {
                byName.computeIfAbsent(r.getName(), k -> new ArrayList<>()).add(aaaa.getAddress());
            }
        }
        return byName;
    }

    /** RFC 2308: a "no records" answer may be cached for min(SOA TTL, SOA minimum); none given: 0. */
    private static long negativeTtl(Message response) {
        for (Record r : response.getSection(Section.AUTHORITY)) {
            if (r instanceof SOARecord soa) {
                return Math.min(soa.getTTL(), soa.getMinimum());
            }
        }
        return 0;
    }

    /**
     * The address as a host: IPv4 dotted, IPv6 in RFC 5952's short form ({@code ::1}, not the JDK's
     * {@code 0:0:0:0:0:0:0:1}), so that the URL matches what people write and other backends publish.
     */
    static String host(InetAddress address) {
        byte[] b = address.getAddress();
        if (b.length != 16) {
            return address.getHostAddress();
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is not shortened
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                out.append("::");
                i += bestLength - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(groups[i]));
        }
        return out.toString();
    }
}
