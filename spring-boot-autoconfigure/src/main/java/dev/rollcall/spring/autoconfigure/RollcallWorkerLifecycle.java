package dev.rollcall.spring.autoconfigure;

import dev.rollcall.worker.RollcallWorker;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Ties a {@link RollcallWorker} to the application context: {@link #start()} makes it serve (the
 * context is up), {@link #stop()} closes it — drain (coordinators watching it stop planning onto
 * it at once), the calls in flight finished, leave discovery, stop the server. Its phase,
 * {@link #PHASE}, is above the web server's graceful shutdown
 * ({@link WebServerGracefulShutdownLifecycle#SMART_LIFECYCLE_PHASE}), so it stops first: the
 * worker has drained and finished its work before the web server stops taking requests, and it
 * starts serving only after the web server has started. {@code stop()} blocks for at most
 * {@code rollcall.worker.shutdown-grace} (default 5 s) plus the drain's quiet period.
 */
public final class RollcallWorkerLifecycle implements SmartLifecycle {

    /** Stops before the web server's graceful shutdown, starts after the web server. */
    public static final int PHASE = WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE + 512;

    private static final Logger log = LoggerFactory.getLogger(RollcallWorkerLifecycle.class);

    private final RollcallWorker worker;
    private volatile boolean running;

    public RollcallWorkerLifecycle(RollcallWorker worker) {
        this.worker = Objects.requireNonNull(worker, "worker");
    }

    @Override
    public void start() {
        worker.serving();
        running = true;
    }

    @Override
    public void stop() {
        log.info("worker {} stopping with the application: draining", worker.endpoint().url());
        worker.close();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
