package com.example.worker;

import dev.rollcall.api.RollcallConfig;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.NoOpFlightProducer;

public final class Worker {

    public static void main(String[] args) throws IOException, InterruptedException {
        FlightProducer myProducer = new NoOpFlightProducer();   // your Arrow Flight service
        try (RollcallWorker worker = RollcallWorker.builder()
                .version("1.4.0")                // whatever "version" means to you; Rollcall never interprets it
                .flightProducer(myProducer)      // same server and port as WorkerInfo
                .config(RollcallConfig.load())   // rollcall.worker.* keys (port, TLS, register=true, ...)
                .start()) {                      // with register=true, returns once the backend has the entry
            System.out.println("serving " + worker.endpoint().url());
            worker.awaitTermination();
        }
    }
}
