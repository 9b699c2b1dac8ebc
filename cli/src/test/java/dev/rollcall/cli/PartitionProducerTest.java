package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rollcall.worker.RollcallWorker;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The producer behind a real worker, called over Flight. */
@SuppressWarnings("try") // FlightStream.close() declares InterruptedException; the tests let it propagate
class PartitionProducerTest {

    private final RootAllocator root = new RootAllocator();
    private PartitionProducer producer;
    private RollcallWorker worker;
    private BufferAllocator clientAllocator;
    private FlightClient client;

    @BeforeEach
    void start() throws Exception {
        producer = new PartitionProducer("1.4.0", root.newChildAllocator("producer", 0, Long.MAX_VALUE));
        worker = RollcallWorker.builder().version("1.4.0").flightProducer(producer).start();
        clientAllocator = root.newChildAllocator("client", 0, Long.MAX_VALUE);
        client = FlightClient.builder(clientAllocator, Location.forGrpcInsecure("127.0.0.1", worker.port())).build();
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        worker.close();
        producer.close();
        clientAllocator.close();
        root.close(); // fails the test if a buffer leaked
    }

    @Test
    void getStream_sendsOneBatchWithVersionRowsAndSum() throws Exception {
        try (FlightStream stream = client.getStream(PartitionProducer.ticket(3, 6))) {
            assertThat(stream.next()).isTrue();
            assertThat(stream.getRoot().getRowCount()).isEqualTo(1);
            assertThat(new String(((VarCharVector) stream.getRoot().getVector("version")).get(0),
                    StandardCharsets.UTF_8)).isEqualTo("1.4.0");
            assertThat(((BigIntVector) stream.getRoot().getVector("rows")).get(0)).isEqualTo(3);
            assertThat(((BigIntVector) stream.getRoot().getVector("sum")).get(0)).isEqualTo(9 + 16 + 25);
            assertThat(stream.next()).isFalse();
        }
    }

    @Test
    void getStream_badTicket_isInvalidArgumentNamingTheTicket() {
        assertThatThrownBy(() -> {
            try (FlightStream stream = client.getStream(new Ticket("sum:9:2".getBytes(StandardCharsets.UTF_8)))) {
                stream.next();
            }
        }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("sum:9:2").contains("0 <= from <= to");
        });
    }

    @Test
    void parse_rejectsWhatIsNotSumFromTo() {
        for (String bad : new String[] {"", "sum:1", "sum:a:b", "max:1:2", "sum:-1:2", "sum:1:2:3"}) {
            Ticket t = new Ticket(bad.getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> PartitionProducer.parse(t)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ticket '" + bad + "'");
        }
    }

    @Test
    void sumOfSquares_refusesOverflow() {
        assertThat(PartitionProducer.sumOfSquares(0, 1_000_000)).isEqualTo(SquaresJob.expectedSum(1_000_000));
        assertThatThrownBy(() -> PartitionProducer.sumOfSquares(3_037_000_000L, 3_037_000_500L))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows");
    }
}
