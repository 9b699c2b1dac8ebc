package dev.rollcall.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGTERM and SIGINT turned into a latch, for a command that owns its process and stops in order:
 * the command closes what it runs and returns 0, where the JVM's own handling of these signals
 * would run the shutdown hooks and exit with 143 or 130, which systemd and scripts read as a failure.
 *
 * <p>{@code sun.misc.Signal} is in {@code jdk.unsupported}, which Java keeps for exactly this
 * (JEP 260) and every JDK from 17 on ships. {@link #close()} gives the signals back to the JVM.
 * Not for in-process runs: a test's JVM keeps its own handlers.
 */
final class StopSignals implements AutoCloseable {

    private final CountDownLatch stop = new CountDownLatch(1);
    private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();

    private StopSignals() {
    }

    /**
     * Takes SIGTERM and SIGINT from the JVM.
     *
     * @throws IllegalArgumentException when the JVM will not give a signal up ({@code -Xrs}, or one it uses itself);
     *                                  the signals taken so far are given back first
     */
    static StopSignals take() {
        StopSignals signals = new StopSignals();
        try {
            for (String name : new String[] {"TERM", "INT"}) {
                Signal signal = new Signal(name);
                signals.previous.put(signal, Signal.handle(signal, s -> signals.stop.countDown()));
            }
        } catch (IllegalArgumentException e) {
            signals.close();
            throw e;
        }
        return signals;
    }

    /** Counted down by the first SIGTERM or SIGINT. */
    CountDownLatch stop() {
        return stop;
    }

    @Override
    public void close() {
        previous.forEach(Signal::handle);
        previous.clear();
    }
}
