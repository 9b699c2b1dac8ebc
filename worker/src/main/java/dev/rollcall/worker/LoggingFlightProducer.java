package dev.rollcall.worker;

import java.util.function.Supplier;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PollInfo;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.Ticket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Passes every call to the user's producer and logs what it throws, with its stack, before Flight
 * turns it into {@code INTERNAL: There was an error servicing your request} (Flight logs nothing).
 * A {@link FlightRuntimeException} is the producer's chosen answer and is logged at DEBUG only.
 * Exceptions are rethrown unchanged; threads are Flight's.
 */
final class LoggingFlightProducer implements FlightProducer {

    private static final Logger log = LoggerFactory.getLogger(RollcallWorker.class);

    private final FlightProducer delegate;
    private volatile String worker;

    LoggingFlightProducer(FlightProducer delegate, String worker) {
        this.delegate = delegate;
        this.worker = worker;
    }

    /** Names the worker by its endpoint once the server is bound (the port may have been 0). */
    void worker(String endpoint) {
        this.worker = endpoint;
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
        logged("getStream", () -> {
            delegate.getStream(context, ticket, listener);
            return null;
        });
    }

    @Override
    public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
        logged("listFlights", () -> {
            delegate.listFlights(context, criteria, listener);
            return null;
        });
    }

    @Override
    public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
        return logged("getFlightInfo", () -> delegate.getFlightInfo(context, descriptor));
    }

    @Override
    public PollInfo pollFlightInfo(CallContext context, FlightDescriptor descriptor) {
        return logged("pollFlightInfo", () -> delegate.pollFlightInfo(context, descriptor));
    }

    @Override
    public SchemaResult getSchema(CallContext context, FlightDescriptor descriptor) {
        return logged("getSchema", () -> delegate.getSchema(context, descriptor));
    }

    @Override
    public Runnable acceptPut(CallContext context, FlightStream stream, StreamListener<PutResult> ackStream) {
        Runnable put = logged("acceptPut", () -> delegate.acceptPut(context, stream, ackStream));
        return () -> logged("acceptPut", () -> {
            put.run();
            return null;
        });
    }

    @Override
    public void doExchange(CallContext context, FlightStream reader, ServerStreamListener writer) {
        logged("doExchange", () -> {
            delegate.doExchange(context, reader, writer);
            return null;
        });
    }

    @Override
    public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
        logged("doAction", () -> {
            delegate.doAction(context, action, listener);
            return null;
        });
    }

    @Override
    public void listActions(CallContext context, StreamListener<ActionType> listener) {
        logged("listActions", () -> {
            delegate.listActions(context, listener);
            return null;
        });
    }

    private <T> T logged(String method, Supplier<T> call) {
        try {
            return call.get();
        } catch (FlightRuntimeException e) {
            log.debug("worker {}: the Flight producer answered {} with {}", worker, method, e.status());
            throw e;
        } catch (RuntimeException | Error e) {
            log.warn("worker {}: the Flight producer failed in {}; the client sees INTERNAL{}", worker, method,
                    ArrowMemory.hintFor(e), e);
            throw e;
        }
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
