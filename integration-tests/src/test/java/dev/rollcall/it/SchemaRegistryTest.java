package dev.rollcall.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.FileDescriptor;
import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.HandlerInfo;
import dev.rollcall.api.ServiceInfo;
import dev.rollcall.api.Visibility;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.Caller;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.JsonMappers;
import dev.rollcall.api.registry.JsonMappingException;
import dev.rollcall.api.registry.KeyExtractionException;
import dev.rollcall.api.registry.KeyRouting;
import dev.rollcall.api.registry.ProtoSchema;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.RollcallConfig;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.it.demo.v1.Address;
import dev.rollcall.it.demo.v1.Order;
import dev.rollcall.it.demo.v1.PlaceOrderRequest;
import dev.rollcall.it.demo.v1.Priority;
import dev.rollcall.policy.SemverRangePolicy;
import dev.rollcall.schema.json.ProtoJsonMappers;
import dev.rollcall.testkit.Closer;
import dev.rollcall.testkit.PushDiscovery;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Service schemas in the registry, fetched from real workers that serve two versions of a service. */
class SchemaRegistryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String ORDERS = DemoOrders.SERVICE;

    @AutoClose
    private final Closer closeables = new Closer();
    private final PushDiscovery discovery = new PushDiscovery();
    /** Reflection calls the workers received, all workers together. */
    private final AtomicInteger reflectionCalls = new AtomicInteger();

    private <T extends AutoCloseable> T closing(T c) {
        return closeables.add(c);
    }

    private final ServerInterceptor countReflection = new ServerInterceptor() {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                           ServerCallHandler<Q, R> next) {
            if (call.getMethodDescriptor().getServiceName().startsWith("grpc.reflection.")) {
                reflectionCalls.incrementAndGet();
            }
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
                    next.startCall(call, headers)) {
            };
        }
    };

    /** A worker of {@code version} serving {@code schema}'s Orders service, counting reflection calls. */
    private RollcallWorker worker(String version, FileDescriptor schema) throws IOException {
        return closing(RollcallWorker.builder().version(version)
                .service(DemoOrders.service(schema, version)).intercept(countReflection).start());
    }

    private WorkerResolver resolver(Map<String, String> config) {
        return closing(WorkerResolver.builder().config(RollcallConfig.of(config)).discovery(discovery)
                .policy(SemverRangePolicy.of("^1.0")).backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .build());
    }

    private static boolean settled(FleetSnapshot s, int candidates) {
        return s.counts().candidates() == candidates && s.counts().pending() == 0 && s.counts().unreachable() == 0;
    }

    @Test
    void eachVersionsWorkersResolveToTheirOwnDescriptors() throws Exception {
        RollcallWorker a1 = worker("1.0.0", DemoOrders.v1());
        RollcallWorker b1 = worker("1.0.0", DemoOrders.v1());
        RollcallWorker a2 = worker("1.1.0", DemoOrders.v2());
        RollcallWorker b2 = worker("1.1.0", DemoOrders.v2());
        WorkerResolver resolver = resolver(Map.of());
        List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
        closing(resolver.addListener(seen::add));

        discovery.push(List.of(a1.endpoint(), b1.endpoint(), a2.endpoint(), b2.endpoint()));
        FleetSnapshot snap = resolver.await(s -> settled(s, 4), WAIT);

        assertThat(snap.counts().compatible()).isEqualTo(4);
        for (RollcallWorker v1 : List.of(a1, b1)) {
            ProtoSchema schema = snap.symbols().forWorker(v1.endpoint()).orElseThrow();
            assertThat(schema.method(ORDERS, "Amend")).isEmpty();
            assertThat(schema.fileContainingSymbol("demo.v1.Order").orElseThrow()
                    .findMessageTypeByName("Order").findFieldByName("coupon")).isNull();
        }
        for (RollcallWorker v2 : List.of(a2, b2)) {
            ProtoSchema schema = snap.symbols().forWorker(v2.endpoint()).orElseThrow();
            assertThat(schema.method(ORDERS, "Amend")).isPresent();
            assertThat(schema.fileContainingSymbol("demo.v1.Order").orElseThrow()
                    .findMessageTypeByName("Order").findFieldByName("coupon")).isNotNull();
        }
        assertThat(snap.symbols().forVersion("1.0.0")).containsSame(snap.symbols().forWorker(a1.endpoint()).orElseThrow());
        // Fleet-wide lookups answer from the newest compatible version that has the symbol.
        assertThat(snap.symbols().protoServices()).containsExactly(ORDERS);
        assertThat(snap.symbols().method(ORDERS, "Amend")).isPresent();
        assertThat(snap.symbols().method(ORDERS, "Place").orElseThrow().getInputType().getFullName())
                .isEqualTo("demo.v1.PlaceOrderRequest");
        assertThat(snap.symbols().fileContainingSymbol("demo.v1.Order.Item").orElseThrow().getName())
                .isEqualTo("demo/v1/orders.proto");
        assertThat(snap.symbols().fileContainingSymbol("demo.v1.Orders.Place")).isPresent();
        assertThat(snap.symbols().file("google/protobuf/timestamp.proto")).isPresent();
        assertThat(snap.symbols().fileContainingSymbol("rollcall.v1.WorkerService")).isEmpty();
        // The schema came with the workers: no snapshot showed a compatible worker without it.
        for (FleetSnapshot s : seen) {
            for (WorkerInfo w : s.workers()) {
                assertThat(s.symbols().forWorker(w.endpoint())).as("schema of %s in snapshot %d", w, s.number()).isPresent();
            }
        }
        // The advertised services are the gRPC services, with their methods as handlers.
        assertThat(snap.target(ORDERS, "Amend", Caller.INGRESS).endpoints())
                .containsExactlyInAnyOrder(a2.endpoint(), b2.endpoint());
    }

    @Test
    void fetchesDescriptorsOncePerVersionNotPerWorker() throws Exception {
        List<RollcallWorker> workers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            workers.add(worker("1.0.0", DemoOrders.v1()));
            workers.add(worker("1.1.0", DemoOrders.v2()));
        }
        WorkerResolver resolver = resolver(Map.of());
        discovery.push(workers.stream().map(RollcallWorker::endpoint).toList());
        resolver.await(s -> settled(s, 6) && s.counts().compatible() == 6, WAIT);
        assertThat(reflectionCalls).hasValue(2);

        // A worker of a known version joins: no fetch; one of a new version: one more.
        workers.add(worker("1.0.0", DemoOrders.v1()));
        workers.add(worker("1.2.0", DemoOrders.v2()));
        discovery.push(workers.stream().map(RollcallWorker::endpoint).toList());
        FleetSnapshot snap = resolver.await(s -> settled(s, 8) && s.counts().compatible() == 8, WAIT);
        assertThat(reflectionCalls).hasValue(3);
        assertThat(snap.symbols().forVersion("1.2.0").orElseThrow().method(ORDERS, "Amend")).isPresent();
    }

    @Test
    void aWorkerWithoutReflectionGivesItsVersionAnEmptySchemaAndIsStillUsed() throws Exception {
        RollcallWorker plain = closing(RollcallWorker.builder().version("1.0.0").reflection(false)
                .service(DemoOrders.service(DemoOrders.v1(), "plain")).start());
        WorkerResolver resolver = resolver(Map.of());
        discovery.push(List.of(plain.endpoint()));
        FleetSnapshot snap = resolver.await(s -> s.counts().compatible() == 1, WAIT);
        assertThat(snap.symbols().forWorker(plain.endpoint()).orElseThrow().isEmpty()).isTrue();
        assertThat(snap.symbols().protoServices()).isEmpty();
        assertThat(snap.symbols().method(ORDERS, "Place")).isEmpty();
    }

    @Test
    void aFailedFetchIsRetriedNotCachedAsEmpty() throws Exception {
        AtomicInteger refused = new AtomicInteger();
        ServerInterceptor refuseFirstReflection = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                if (call.getMethodDescriptor().getServiceName().startsWith("grpc.reflection.")
                        && refused.getAndIncrement() == 0) {
                    call.close(io.grpc.Status.UNAVAILABLE.withDescription("not yet"), new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                }
                return next.startCall(call, headers);
            }
        };
        RollcallWorker w = closing(RollcallWorker.builder().version("1.0.0")
                .service(DemoOrders.service(DemoOrders.v1(), "flaky")).intercept(refuseFirstReflection).start());
        WorkerResolver resolver = resolver(Map.of());
        List<FleetSnapshot> seen = new CopyOnWriteArrayList<>();
        closing(resolver.addListener(seen::add));
        discovery.push(List.of(w.endpoint()));

        FleetSnapshot snap = resolver.await(s -> s.symbols().forWorker(w.endpoint()).isPresent(), WAIT);
        assertThat(snap.symbols().method(ORDERS, "Place")).isPresent();
        assertThat(refused).hasValue(2);
        // After the failure the worker was used without a schema rather than held back, until the retry.
        org.awaitility.Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(seen).anySatisfy(s -> {
            assertThat(s.counts().compatible()).isEqualTo(1);
            assertThat(s.symbols().forWorker(w.endpoint())).isEmpty();
        }));
    }

    @Test
    void schemasAreNotFetchedWhenSwitchedOff() throws Exception {
        RollcallWorker w = worker("1.0.0", DemoOrders.v1());
        WorkerResolver resolver = resolver(Map.of("rollcall.schemas.fetch", "false"));
        discovery.push(List.of(w.endpoint()));
        FleetSnapshot snap = resolver.await(s -> s.counts().compatible() == 1, WAIT);
        assertThat(snap.symbols().forWorker(w.endpoint())).isEmpty();
        assertThat(reflectionCalls).hasValue(0);
    }

    private static final String ORDER_JSON = """
            {"order": {
              "customerId": "c-42",
              "items": [{"sku": "apple", "quantity": 3}, {"sku": "pear", "quantity": 1}],
              "attributes": {"color": "red", "gift": "yes"},
              "priority": "PRIORITY_HIGH",
              "shipTo": {"street": "1 Main St", "city": "Springfield"},
              "billing": {"city": "Shelbyville"},
              "placedAt": "2026-11-29T12:00:00Z"
            }}""";

    private FleetSnapshot twoVersions() throws Exception {
        RollcallWorker v1 = worker("1.0.0", DemoOrders.v1());
        RollcallWorker v2 = worker("1.1.0", DemoOrders.v2());
        WorkerResolver resolver = resolver(Map.of("rollcall.keys.demo.v1.Orders.Place", "order.customer_id",
                "rollcall.keys.demo.v1.Orders.Cancel", "order_id.nope"));
        discovery.push(List.of(v1.endpoint(), v2.endpoint()));
        return resolver.await(s -> settled(s, 2) && s.counts().compatible() == 2, WAIT);
    }

    @Test
    void jsonRoundTripsNestedRepeatedMapEnumAndOneofFields() throws Exception {
        FleetSnapshot snap = twoVersions();
        JsonMappers json = ProtoJsonMappers.over(snap);

        byte[] bytes = json.requestFromJson(ORDERS, "Place", ORDER_JSON);
        Order order = PlaceOrderRequest.parseFrom(bytes).getOrder(); // the generated class agrees
        assertThat(order.getCustomerId()).isEqualTo("c-42");
        assertThat(order.getItemsList()).extracting(Order.Item::getSku, Order.Item::getQuantity)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("apple", 3), org.assertj.core.groups.Tuple.tuple("pear", 1));
        assertThat(order.getAttributesMap()).containsExactlyInAnyOrderEntriesOf(Map.of("color", "red", "gift", "yes"));
        assertThat(order.getPriority()).isEqualTo(Priority.PRIORITY_HIGH);
        assertThat(order.getDeliveryCase()).isEqualTo(Order.DeliveryCase.SHIP_TO);
        assertThat(order.getShipTo()).isEqualTo(Address.newBuilder().setStreet("1 Main St").setCity("Springfield").build());
        assertThat(order.getPlacedAt().getSeconds())
                .isEqualTo(java.time.Instant.parse("2026-11-29T12:00:00Z").getEpochSecond());

        assertThat(JsonParser.parseString(json.requestToJson(ORDERS, "Place", bytes)))
                .isEqualTo(JsonParser.parseString(ORDER_JSON));
        // The other member of the oneof, and proto field names, parse too.
        byte[] pickup = json.requestFromJson(ORDERS, "Place", "{\"order\":{\"pickup_store\":\"s-7\"}}");
        assertThat(PlaceOrderRequest.parseFrom(pickup).getOrder().getPickupStore()).isEqualTo("s-7");

        byte[] response = json.responseFromJson(ORDERS, "Place", "{\"orderId\":\"o-1\",\"servedBy\":\"x\"}");
        assertThat(JsonParser.parseString(json.responseToJson(ORDERS, "Place", response)))
                .isEqualTo(JsonParser.parseString("{\"orderId\":\"o-1\",\"servedBy\":\"x\"}"));

        // A field only version 2 has: the fleet-wide mapper knows it, version 1's does not.
        assertThat(json.requestFromJson(ORDERS, "Place", "{\"order\":{\"coupon\":\"SAVE\"}}")).isNotEmpty();
        JsonMappers v1 = ProtoJsonMappers.over(snap.symbols().forVersion("1.0.0").orElseThrow());
        assertThatThrownBy(() -> v1.requestFromJson(ORDERS, "Place", "{\"order\":{\"coupon\":\"SAVE\"}}"))
                .isInstanceOfSatisfying(JsonMappingException.class, e -> assertThat(e.fieldPath()).isEqualTo("order.coupon"));
    }

    @Test
    void badJsonNamesTheFieldPath() throws Exception {
        JsonMappers json = ProtoJsonMappers.over(twoVersions());

        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place",
                "{\"order\":{\"items\":[{\"sku\":\"a\",\"quantity\":1},{\"sku\":\"b\"},{\"sku\":\"c\",\"quantity\":\"lots\"}]}}"))
                .isInstanceOfSatisfying(JsonMappingException.class, e -> {
                    assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.BAD_FIELD);
                    assertThat(e.fieldPath()).isEqualTo("order.items[2].quantity");
                    assertThat(e.getMessage()).contains("order.items[2].quantity", "demo.v1.Orders/Place");
                });
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place", "{\"order\":{\"billing\":{\"zip\":\"1\"}}}"))
                .isInstanceOfSatisfying(JsonMappingException.class, e -> {
                    assertThat(e.fieldPath()).isEqualTo("order.billing.zip");
                    assertThat(e.getMessage()).contains("has no field 'zip'");
                });
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place", "{\"order\":{\"priority\":\"PRIORITY_URGENT\"}}"))
                .isInstanceOfSatisfying(JsonMappingException.class, e -> assertThat(e.fieldPath()).isEqualTo("order.priority"));
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place",
                "{\"order\":{\"attributes\":{\"color\":\"red\",\"size\":{\"x\":1}}}}"))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.fieldPath()).isEqualTo("order.attributes[\"size\"]"));
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place", "{\"order\": [1]}"))
                .isInstanceOfSatisfying(JsonMappingException.class, e -> assertThat(e.fieldPath()).isEqualTo("order"));
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Place", "{\"order\":"))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.MALFORMED_JSON));
        assertThatThrownBy(() -> json.requestFromJson(ORDERS, "Refund", "{}"))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.UNKNOWN_METHOD));
    }

    @Test
    void keyExtractionReadsNestedFieldsAndFailsClearlyWhenTheKeyIsMissing() throws Exception {
        FleetSnapshot snap = twoVersions();
        byte[] request = PlaceOrderRequest.newBuilder()
                .setOrder(Order.newBuilder().setCustomerId("c-42").setPickupStore("s-1")).build().toByteArray();
        assertThat(snap.keyExtractors().keyPath(ORDERS, "Place")).contains("order.customer_id");
        assertThat(snap.keyExtractors().extractKey(ORDERS, "Place", request)).isEqualTo("c-42");

        assertThatThrownBy(() -> snap.keyExtractors().extractKey(ORDERS, "Place", PlaceOrderRequest.getDefaultInstance().toByteArray()))
                .isInstanceOfSatisfying(KeyExtractionException.class, e -> {
                    assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.KEY_MISSING);
                    assertThat(e.getMessage()).contains("field order is not set", "order.customer_id");
                });
        byte[] noCustomer = PlaceOrderRequest.newBuilder().setOrder(Order.newBuilder().setPickupStore("s-1"))
                .build().toByteArray();
        assertThatThrownBy(() -> snap.keyExtractors().extractKey(ORDERS, "Place", noCustomer))
                .isInstanceOfSatisfying(KeyExtractionException.class, e -> {
                    assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.KEY_MISSING);
                    assertThat(e.getMessage()).contains("order.customer_id");
                });
        assertThatThrownBy(() -> snap.keyExtractors().extractKey(ORDERS, "Place", new byte[] {(byte) 0xff, 1, 2}))
                .isInstanceOfSatisfying(KeyExtractionException.class,
                        e -> assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.UNPARSABLE_REQUEST));
        assertThatThrownBy(() -> snap.keyExtractors().extractKey(ORDERS, "Amend", request))
                .isInstanceOfSatisfying(KeyExtractionException.class, e -> {
                    assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.NO_KEY_CONFIGURED);
                    assertThat(e.getMessage()).contains("rollcall.keys.demo.v1.Orders.Amend");
                });
        assertThatThrownBy(() -> snap.keyExtractors().extractKey(ORDERS, "Cancel", new byte[0]))
                .isInstanceOfSatisfying(KeyExtractionException.class, e -> {
                    assertThat(e.reason()).isEqualTo(KeyExtractionException.Reason.INVALID_KEY_PATH);
                    assertThat(e.getMessage()).contains("order_id.nope", "rollcall.keys.demo.v1.Orders.Cancel");
                });
    }

    @Test
    void aSyntacticallyBadKeyPathFailsAtStartNamingTheKey() {
        assertThatThrownBy(() -> resolver(Map.of("rollcall.keys.demo.v1.Orders.Place", "order..customer_id")))
                .isInstanceOfSatisfying(ConfigurationException.class,
                        e -> assertThat(e.getMessage()).contains("rollcall.keys.demo.v1.Orders.Place", "order..customer_id"));
    }

    @Test
    void routesKeysOnlyToCompatibleWorkersThatOfferTheTargetAndLetTheCallerIn() throws Exception {
        RollcallWorker a = worker("1.0.0", DemoOrders.v1());
        RollcallWorker b = worker("1.1.0", DemoOrders.v2());
        RollcallWorker rejected = worker("2.0.0", DemoOrders.v2());
        RollcallWorker other = closing(RollcallWorker.builder().version("1.0.0")
                .advertise(new ServiceInfo("udf", Visibility.PUBLIC, List.of(HandlerInfo.of("Place")))).start());
        RollcallWorker internalOnly = closing(RollcallWorker.builder().version("1.0.0")
                .advertise(new ServiceInfo(ORDERS, Visibility.INTERNAL, List.of(HandlerInfo.of("Place"))))
                .service(DemoOrders.service(DemoOrders.v1(), "internal")).start());
        WorkerResolver resolver = resolver(Map.of());
        discovery.push(List.of(a.endpoint(), b.endpoint(), rejected.endpoint(), other.endpoint(),
                internalOnly.endpoint()));
        FleetSnapshot snap = resolver.await(s -> settled(s, 5) && s.counts().rejected() == 1, WAIT);
        KeyRouting routing = snap;

        Set<WorkerEndpoint> fromIngress = new HashSet<>();
        Set<WorkerEndpoint> fromInside = new HashSet<>();
        for (int i = 0; i < 3_000; i++) {
            fromIngress.add(routing.route(ORDERS, "Place", Caller.INGRESS, "customer-" + i).endpoint());
            fromInside.add(routing.route(ORDERS, "Place", Caller.INTERNAL, "customer-" + i).endpoint());
            assertThat(routing.route(ORDERS, "Place", Caller.INGRESS, "customer-" + i))
                    .isEqualTo(routing.route(ORDERS, "Place", Caller.INGRESS, "customer-" + i));
        }
        assertThat(fromIngress).containsExactlyInAnyOrder(a.endpoint(), b.endpoint());
        assertThat(fromInside).containsExactlyInAnyOrder(a.endpoint(), b.endpoint(), internalOnly.endpoint());
        // Only version 2's worker offers Amend.
        assertThat(routing.route(ORDERS, "Amend", Caller.INGRESS, "k").endpoint()).isEqualTo(b.endpoint());
        assertThatThrownBy(() -> routing.route(ORDERS, "Refund", Caller.INGRESS, "k"))
                .isInstanceOf(dev.rollcall.api.registry.TargetLookupException.class);
        assertThat(snap.status(rejected.endpoint().url()).orElseThrow().state()).isEqualTo(WorkerStatus.State.REJECTED);
    }
}
