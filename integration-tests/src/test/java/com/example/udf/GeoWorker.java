package com.example.udf;

import dev.rollcall.api.Capabilities;
import dev.rollcall.worker.RollcallWorker;
import java.io.IOException;
import org.apache.arrow.flight.FlightProducer;

public final class GeoWorker {

    /** Call once the engine has registered geo_distance: from then on the worker says it has it. */
    static RollcallWorker start(FlightProducer engine) throws IOException {
        return RollcallWorker.builder()
                .version("1.4.0")                                      // the same release as the old workers
                .capabilities("plan-protocol=3", "udf:geo_distance")    // what this worker can do, not what it is
                .flightProducer(engine)
                .start();
    }

    /** Taking the UDF out of service: withdraw the claim first (pushed at once), unregister it after. */
    static void withdrawGeoDistance(RollcallWorker worker) {
        worker.capabilities(Capabilities.of("plan-protocol=3"));
    }
}
