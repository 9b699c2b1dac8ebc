package dev.rollcall.discovery.dns;

import dev.rollcall.api.PeerText;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.discovery.dns.DnsSettings.RecordType;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>Blocking, bounded by {@code timeout} per question and {@code lookup-timeout} in all; the
 * targets' questions are asked {@value DnsSettings#QUESTIONS_IN_FLIGHT} at a time. Not
 * thread-safe: the discovery's loop thread owns it.
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
        this(settings, settings.server().isPresent() ? new SimpleResolver(settings.server().get())
                : new ExtendedResolver()); // the system's resolvers (resolv.conf and the like)
    }

    /** With the resolver given: the fuzz test's answers a server never sends. */
    DnsLookup(DnsSettings settings, Resolver resolver) {
        this.settings = settings;
        resolver.setTimeout(settings.timeout());
        this.resolver = resolver;
        try {
            this.name = Name.fromString(settings.name());
        } catch (TextParseException e) {
            throw new IllegalArgumentException("not a DNS name: " + settings.name(), e); // DnsSettings checked it
        }
    }

    /**
     * Asks the question and, for SRV, the targets' addresses, within {@code lookup-timeout} in all:
     * targets not in the answer's additional section are asked {@value DnsSettings#QUESTIONS_IN_FLIGHT}
     * questions at a time, each within {@code timeout}.
     */
    Answer lookup() throws LookupFailedException, InterruptedException {
        long deadline = System.nanoTime() + settings.lookupTimeout().toNanos();
        RecordType type = settings.recordType();
        int qtype = switch (type) {
            case A -> Type.A;
            case AAAA -> Type.AAAA;
            case SRV -> Type.SRV;
        };
        Message response = ask(name, qtype, deadline);
        List<Record> answers = response.getSection(Section.ANSWER);
        long ttl = Long.MAX_VALUE;
        Set<WorkerEndpoint> endpoints = new LinkedHashSet<>();
        List<String> skipped = new ArrayList<>();
        if (type == RecordType.SRV) {
            List<SRVRecord> records = new ArrayList<>();
            for (Record r : answers) {
                if (r instanceof SRVRecord srv) {
                    records.add(srv);
                }
            }
            Map<Name, Addresses> targets = targets(records, addresses(response.getSection(Section.ADDITIONAL)),
                    deadline);
            for (SRVRecord srv : records) {
                ttl = Math.min(ttl, srv.getTTL());
                ttl = Math.min(ttl, addSrv(srv, targets.get(srv.getTarget()), endpoints, skipped));
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

    /** A target's addresses and the shortest TTL among them ({@link Long#MAX_VALUE}: none). */
    private record Addresses(List<InetAddress> addresses, long ttl) {
    }

    /** Whether an SRV record names a target to look up at all. */
    private static boolean usable(SRVRecord srv) {
        return !srv.getTarget().equals(Name.root) && srv.getPort() >= 1 && srv.getPort() <= 65535;
    }

    /**
     * The addresses of every usable record's target: from the additional section where it has
     * them, else asked (A and AAAA, once per target however many records name it), a window of
     * {@value DnsSettings#QUESTIONS_IN_FLIGHT} questions at a time, all before {@code deadline}.
     */
    private Map<Name, Addresses> targets(List<SRVRecord> records, Map<Name, List<InetAddress>> additional,
                                         long deadline) throws LookupFailedException, InterruptedException {
        Map<Name, Addresses> found = new LinkedHashMap<>();
        Map<Name, String> toAsk = new LinkedHashMap<>();     // target -> the record that names it first
        for (SRVRecord srv : records) {
            if (!usable(srv)) {
                continue;
            }
            List<InetAddress> given = additional.get(srv.getTarget());
            if (given != null) {
                found.put(srv.getTarget(), new Addresses(given, Long.MAX_VALUE));
            } else {
                toAsk.putIfAbsent(srv.getTarget(), source(srv));
            }
        }
        ArrayDeque<Question> waiting = new ArrayDeque<>();
        toAsk.forEach((target, source) -> {
            waiting.add(new Question(target, Type.A, source));
            waiting.add(new Question(target, Type.AAAA, source));
        });
        int total = waiting.size();
        ArrayDeque<Asked> inFlight = new ArrayDeque<>();
        Map<Name, List<InetAddress>> asked = new LinkedHashMap<>();
        Map<Name, Long> askedTtl = new LinkedHashMap<>();
        int answered = 0;
        try {
            while (!waiting.isEmpty() || !inFlight.isEmpty()) {
                while (inFlight.size() < DnsSettings.QUESTIONS_IN_FLIGHT && !waiting.isEmpty()) {
                    Question q = waiting.poll();
                    Message query = Message.newQuery(Record.newRecord(q.target(), q.type(), DClass.IN));
                    inFlight.add(new Asked(q, resolver.sendAsync(query).toCompletableFuture()));
                }
                Asked next = inFlight.poll();
                Message m = await(next.answer(), deadline, next.question().describe(),
                        " (" + answered + " of " + total + " questions about SRV targets answered)");
                answered++;
                Question q = next.question();
                int rcode = m.getRcode();
                if (rcode == Rcode.NXDOMAIN) {
                    asked.computeIfAbsent(q.target(), k -> new ArrayList<>());
                    continue;   // the target does not exist: only its records are skipped
                }
                if (rcode != Rcode.NOERROR) {
                    throw new LookupFailedException(PeerText.escape(q.describe()) + ": " + Rcode.string(rcode) + " from "
                            + settings.serverText(), null);
                }
                List<InetAddress> list = asked.computeIfAbsent(q.target(), k -> new ArrayList<>());
                for (Record r : m.getSection(Section.ANSWER)) {
                    if (r instanceof ARecord a) {
                        list.add(a.getAddress());
                        askedTtl.merge(q.target(), r.getTTL(), Math::min);
                    } else if (r instanceof AAAARecord aaaa) {
                        list.add(aaaa.getAddress());
                        askedTtl.merge(q.target(), r.getTTL(), Math::min);
                    }
                }
            }
        } finally {
            inFlight.forEach(a -> a.answer().cancel(true));   // a failed lookup leaves nothing waiting on our side
        }
        asked.forEach((target, list) -> found.put(target, new Addresses(list, askedTtl.getOrDefault(target,
                Long.MAX_VALUE))));
        return found;
    }

    /** One follow-up question: an address type of an SRV record's target. */
    private record Question(Name target, int type, String source) {
        String describe() {
            return Type.string(type) + " " + target + " (target of " + source + ")";
        }
    }

    private record Asked(Question question, CompletableFuture<Message> answer) {
    }

    private String source(SRVRecord srv) {
        return "SRV record '" + srv.rdataToString() + "' of " + settings.name();
    }

    /** Adds the endpoints of one SRV record; returns the shortest TTL of the target's addresses. */
    private long addSrv(SRVRecord srv, Addresses target, Set<WorkerEndpoint> endpoints, List<String> skipped) {
        String source = source(srv);
        if (srv.getTarget().equals(Name.root)) {
            return Long.MAX_VALUE; // RFC 2782: "." means the service is decidedly not available there
        }
        if (srv.getPort() < 1 || srv.getPort() > 65535) {
            skipped.add(PeerText.escape(source) + ": port " + srv.getPort() + " is outside 1..65535");
            return Long.MAX_VALUE;
        }
        if (target == null || target.addresses().isEmpty()) {
            skipped.add(PeerText.escape(source) + ": its target " + PeerText.escape(srv.getTarget().toString())
                    + " has no A or AAAA record");
            return target == null ? Long.MAX_VALUE : target.ttl();
        }
        String name = srv.getTarget().toString(true);
        Map<String, String> labels = Map.of(PRIORITY_LABEL, Integer.toString(srv.getPriority()),
                WEIGHT_LABEL, Integer.toString(srv.getWeight()), TARGET_LABEL, name);
        for (InetAddress address : target.addresses()) {
            endpoints.add(new WorkerEndpoint(host(address), srv.getPort(), settings.tls(), labels));
        }
        return target.ttl();
    }

    /** The answer to {@code qtype name}, which must be NOERROR: anything else is a failure, never an empty set. */
    private Message ask(Name n, int qtype, long deadline) throws LookupFailedException, InterruptedException {
        Message query = Message.newQuery(Record.newRecord(n, qtype, DClass.IN));
        Message m = await(resolver.sendAsync(query).toCompletableFuture(), deadline, settings.question(), "");
        int rcode = m.getRcode();
        if (rcode != Rcode.NOERROR) {
            String meaning = rcode == Rcode.NXDOMAIN ? " (the name does not exist)"
                    : rcode == Rcode.SERVFAIL ? " (the server could not answer)" : "";
            throw new LookupFailedException(settings.question() + ": " + Rcode.string(rcode) + meaning + " from "
                    + settings.serverText(), null);
        }
        return m;
    }

    /**
     * The answer, once it comes: each question has {@code timeout} (dnsjava's, on the resolver), the
     * whole lookup {@code lookup-timeout} ({@code deadline}), whichever ends first.
     */
    private Message await(CompletableFuture<Message> answer, long deadline, String what, String progress)
            throws LookupFailedException, InterruptedException {
        long left = deadline - System.nanoTime();
        try {
            if (left <= 0) {
                throw new TimeoutException();
            }
            return answer.get(left, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new LookupFailedException(PeerText.escape(what) + ": the lookup took longer than " + settings.lookupTimeout().toMillis()
                    + " ms (" + settings.lookupTimeoutKey() + ") on " + settings.serverText() + progress, null);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            String reason = c.getMessage() == null ? c.getClass().getSimpleName() : PeerText.escape(c.getMessage());
            throw new LookupFailedException(PeerText.escape(what) + ": no answer from " + settings.serverText() + " within "
                    + settings.timeout().toMillis() + " ms (" + reason + ")", c);
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
