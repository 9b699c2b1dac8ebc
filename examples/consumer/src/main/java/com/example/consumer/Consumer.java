package com.example.consumer;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;

/**
 * What a new user of Rollcall does first, on the class path {@code rollcall-dependencies} gave this
 * project: the README's Quick Start (a resolver over a static list, semver policy) against a worker
 * it starts, then one Arrow Flight call to the worker the resolver chose. Exits non-zero, with the
 * reason, when the class path mixes versions of one library or any step fails.
 */
public final class Consumer {

    private static final String VERSION = "1.4.0";

    public static void main(String[] args) throws Exception {
        ClassPathVersions versions = ClassPathVersions.of(System.getProperty("java.class.path"));
        List<String> mixed = versions.mixedFamilies();
        if (!mixed.isEmpty()) {
            fail("the class path mixes versions of one library:\n  " + String.join("\n  ", mixed));
        }
        // The suite passes the versions its build tested (consumer-check); a user's run checks one each.
        List<String> differing = versions.differingFrom(System.getProperty("consumer.expected-versions", ""));
        if (!differing.isEmpty()) {
            fail("the class path is not the set the build tested:\n  " + String.join("\n  ", differing));
        }
        System.out.println("one version per library: " + versions);
        try (BufferAllocator allocator = new RootAllocator();
             GreetingProducer producer = new GreetingProducer(VERSION, allocator.newChildAllocator("worker", 0, Long.MAX_VALUE));
             RollcallWorker worker = RollcallWorker.builder()
                     .version(VERSION)
                     .host("127.0.0.1")
                     .flightProducer(producer)
                     .start()) {
            Path properties = Files.createTempFile("rollcall", ".properties");
            Files.writeString(properties, String.join("\n",
                    "rollcall.discovery.type=static",
                    "rollcall.discovery.static.endpoints=" + worker.endpoint().url(),
                    "rollcall.policy.type=semver",
                    "rollcall.policy.semver.range=^1.4.0"), StandardCharsets.UTF_8);
            WorkerInfo chosen;
            try (WorkerResolver resolver = WorkerResolver.fromConfig(RollcallConfig.load(properties))) {
                FleetSnapshot snapshot = resolver.awaitSettled(Duration.ofSeconds(30));
                if (snapshot.workers().size() != 1) {
                    fail("the resolver kept " + snapshot.workers() + ", expected the one worker at " + worker.endpoint().url());
                }
                chosen = snapshot.workers().get(0);
            } finally {
                Files.delete(properties);
            }
            System.out.println("resolved " + chosen.endpoint().url() + " (" + chosen.version() + ")");
            String answer = flightCall(allocator, chosen);
            if (!answer.equals("hello from " + VERSION)) {
                fail("the Flight call answered '" + answer + "'");
            }
            System.out.println("flight: " + answer);
        }
    }

    /** DoGet over Arrow Flight: the path where mixed Netty versions fail first (buffers, HTTP/2). */
    private static String flightCall(BufferAllocator allocator, WorkerInfo worker) throws Exception {
        Location location = Location.forGrpcInsecure(worker.endpoint().host(), worker.endpoint().port());
        try (BufferAllocator child = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
             FlightClient client = FlightClient.builder(child, location).build();
             FlightStream stream = client.getStream(new Ticket("greet".getBytes(StandardCharsets.UTF_8)))) {
            if (!stream.next() || stream.getRoot().getRowCount() != 1) {
                fail("the Flight stream carried no row");
            }
            VarCharVector text = (VarCharVector) stream.getRoot().getVector(GreetingProducer.COLUMN);
            return new String(text.get(0), StandardCharsets.UTF_8);
        }
    }

    private static void fail(String reason) {
        System.err.println("consumer: " + reason);
        System.exit(1);
    }

    private Consumer() {
    }

}
