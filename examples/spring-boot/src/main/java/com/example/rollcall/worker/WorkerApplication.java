package com.example.rollcall.worker;

import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;

@SpringBootApplication
public class WorkerApplication {

    public static void main(String[] args) {
        // application.yml, then application-worker.yml: rollcall.worker.enabled=true and its version.
        new SpringApplicationBuilder(WorkerApplication.class).profiles("worker").run(args);
    }

    /** Your Arrow Flight service: served with WorkerInfo on the worker's one gRPC port. */
    @Bean
    FlightProducer flightProducer() {
        return new NoOpFlightProducer();
    }
}
