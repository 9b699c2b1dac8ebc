package com.example.coordinator;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.core.WorkerResolver;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;

public final class CallingWorkers {

    /** Your own gRPC service on the workers: one channel, calls spread over the compatible workers. */
    static ManagedChannel ordersChannel(WorkerResolver resolver) {
        return ManagedChannelBuilder.forTarget(resolver.grpcTarget("demo.v1.Orders")) // only workers offering it
                .usePlaintext()
                .intercept(resolver.callObserver())   // a worker whose calls fail UNAVAILABLE is out at once
                .build();
    }

    /** Arrow Flight to one worker of a snapshot, over the connection the resolver probes it on. */
    static long rows(WorkerResolver resolver, WorkerInfo worker, BufferAllocator allocator, Ticket ticket)
            throws Exception {
        ManagedChannel channel = resolver.channel(worker.endpoint());      // the resolver's; never shut it down
        try (FlightClient client = FlightGrpcUtils.createFlightClientWithSharedChannel(allocator, channel);
             FlightStream stream = client.getStream(ticket)) {
            long rows = 0;
            while (stream.next()) {
                rows += stream.getRoot().getRowCount();
            }
            return rows;
        } catch (FlightRuntimeException e) {
            if (e.status().code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE) {
                resolver.reportFailure(worker.endpoint(), Status.UNAVAILABLE.withDescription(e.getMessage()));
            }
            throw e;
        }
    }
}
