package dev.rollcall.spring.autoconfigure;

import dev.rollcall.worker.RollcallWorker;
import java.util.List;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

/**
 * A Spring Boot worker application (a web application too, as most are), run in a JVM of its own
 * by {@link SpringWorkerShutdownTest}: its {@link FlightProducer} bean answers each {@code DoGet}
 * with {@link #ROWS} numbers. Prints {@code SERVING <url>} once the application is ready.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class SpringWorkerApp {

    static final int ROWS = 1000;

    public static void main(String[] args) {
        SpringApplication.run(SpringWorkerApp.class, args);
    }

    @Bean(destroyMethod = "close")
    BufferAllocator allocator() {
        return new RootAllocator();
    }

    @Bean
    FlightProducer numbers(BufferAllocator allocator) {
        return new Numbers(allocator);
    }

    @EventListener
    void ready(ApplicationReadyEvent event) {
        System.out.println("SERVING " + event.getApplicationContext().getBean(RollcallWorker.class).endpoint().url());
        System.out.flush();
    }

    /** {@link #ROWS} numbers per {@code DoGet}, whatever the ticket. */
    static final class Numbers extends NoOpFlightProducer {
        private static final Schema SCHEMA = new Schema(List.of(Field.nullable("n", new ArrowType.Int(32, true))));
        private final BufferAllocator allocator;

        Numbers(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
            try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
                IntVector n = (IntVector) root.getVector("n");
                n.allocateNew(ROWS);
                for (int i = 0; i < ROWS; i++) {
                    n.set(i, i);
                }
                root.setRowCount(ROWS);
                listener.start(root);
                listener.putNext();
                listener.completed();
            }
        }
    }
}
