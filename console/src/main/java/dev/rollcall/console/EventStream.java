package dev.rollcall.console;

import com.sun.net.httpserver.HttpExchange;
import dev.rollcall.api.registry.FleetSnapshot;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's Server-Sent Events: one sender thread ({@code rollcall-console-<name>-events}) writes
 * each new snapshot's JSON to every open stream. The resolver's listener only hands the snapshot over
 * ({@link #offer}, latest wins, never blocks); a snapshot that arrives while the sender is still
 * writing replaces the one waiting. At most {@code maxClients} streams are open at once.
 *
 * <p>A write that takes longer than the write timeout (a browser that stopped reading, a full TCP
 * window) is ended by a watchdog thread ({@code rollcall-console-<name>-watchdog}) that interrupts
 * the sender: the JDK server writes over a blocking {@code SocketChannel}, which an interrupt closes.
 * That stream is dropped and the sender goes on with the others. A comment line every keep-alive
 * interval finds streams whose browser has gone.
 */
final class EventStream implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EventStream.class);
    private static final byte[] KEEPALIVE = ": keepalive\n\n".getBytes(StandardCharsets.US_ASCII);

    /** One open stream. */
    private record Client(HttpExchange exchange, OutputStream out, String peer) {
    }

    private final FleetJson json;
    private final Timeline timeline;
    private final Supplier<FleetSnapshot> current;
    private final int maxClients;
    private final long writeTimeoutNanos;
    private final long keepaliveNanos;
    private final Thread sender;
    private final ScheduledExecutorService watchdog;

    private final Object lock = new Object();
    private FleetSnapshot waiting;                              // guarded by lock
    private final List<Client> joining = new ArrayList<>();     // guarded by lock
    private int open;                                           // guarded by lock: joining + streaming
    private boolean closed;                                     // guarded by lock

    private final List<Client> streaming = new ArrayList<>();   // the sender's own
    private FleetJson.Built lastSent;                           // the sender's own

    private final Object watch = new Object();
    private Client writing;                                     // guarded by watch
    private long deadline;                                      // guarded by watch

    EventStream(String name, FleetJson json, Timeline timeline, Supplier<FleetSnapshot> current, int maxClients,
                Duration writeTimeout, Duration keepalive) {
        this.json = json;
        this.timeline = timeline;
        this.current = current;
        this.maxClients = maxClients;
        this.writeTimeoutNanos = writeTimeout.toNanos();
        this.keepaliveNanos = keepalive.toNanos();
        this.sender = new Thread(this::run, "rollcall-console-" + name + "-events");
        this.sender.setDaemon(true);
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rollcall-console-" + name + "-watchdog");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(20), writeTimeoutNanos / 4);
        watchdog.scheduleWithFixedDelay(this::checkWrite, period, period, TimeUnit.NANOSECONDS);
        sender.start();
    }

    /** A new snapshot: replaces one still waiting. Never blocks; any thread. */
    void offer(FleetSnapshot snapshot) {
        synchronized (lock) {
            if (waiting == null || waiting.number() < snapshot.number()) {
                waiting = snapshot;
                lock.notifyAll();
            }
        }
    }

    /**
     * Takes an exchange whose {@code 200} headers have not been sent yet: sends them and streams to it.
     * Returns false, sending nothing, when {@code maxClients} streams are open or the console closed.
     */
    boolean open(HttpExchange exchange) throws IOException {
        synchronized (lock) {
            if (closed || open >= maxClients) {
                return false;
            }
            open++;
        }
        try {
            exchange.sendResponseHeaders(200, 0);
        } catch (IOException | RuntimeException e) {
            synchronized (lock) {
                open--;
            }
            throw e;
        }
        synchronized (lock) {
            joining.add(new Client(exchange, exchange.getResponseBody(), String.valueOf(exchange.getRemoteAddress())));
            lock.notifyAll();
        }
        return true;
    }

    /** Streams open now. */
    int clients() {
        synchronized (lock) {
            return open;
        }
    }

    int maxClients() {
        return maxClients;
    }

    private void run() {
        long nextKeepalive = System.nanoTime() + keepaliveNanos;
        while (true) {
            FleetSnapshot next;
            List<Client> fresh;
            synchronized (lock) {
                while (!closed && waiting == null && joining.isEmpty()) {
                    long left = nextKeepalive - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    } catch (InterruptedException e) {
                        // The watchdog's interrupt may land just after a write finished: not a stop.
                    }
                }
                if (closed) {
                    return;
                }
                next = waiting;
                waiting = null;
                fresh = new ArrayList<>(joining);
                joining.clear();
            }
            try {
                if (next != null) {
                    timeline.record(next);
                    if (streaming.isEmpty()) {
                        lastSent = null; // nobody to send to: /api/fleet builds its own when asked
                    } else if (lastSent == null || next.number() > lastSent.snapshot()) {
                        lastSent = json.publish(next);
                        sendAll(event(lastSent));
                    }
                }
                if (!fresh.isEmpty()) {
                    if (lastSent == null) {
                        FleetSnapshot now = current.get();
                        timeline.record(now);
                        lastSent = json.publish(now);
                    }
                    byte[] first = concat("retry: 2000\n".getBytes(StandardCharsets.US_ASCII), event(lastSent));
                    for (Client c : fresh) {
                        if (write(c, first)) {
                            streaming.add(c);
                        }
                    }
                }
                if (System.nanoTime() - nextKeepalive >= 0) {
                    sendAll(KEEPALIVE);
                    nextKeepalive = System.nanoTime() + keepaliveNanos;
                }
            } catch (RuntimeException e) {
                log.warn("console events: cannot send snapshot {}: {}", next == null ? "?" : next.number(), e.toString(), e);
            }
        }
    }

    private void sendAll(byte[] payload) {
        streaming.removeIf(c -> !write(c, payload));
    }

    /** Writes and flushes within the write timeout; false (and the stream closed) when that failed. */
    private boolean write(Client c, byte[] payload) {
        synchronized (watch) {
            writing = c;
            deadline = System.nanoTime() + writeTimeoutNanos;
        }
        IOException failed = null;
        try {
            c.out().write(payload);
            c.out().flush();
        } catch (IOException e) {
            failed = e;
        } finally {
            boolean late;
            synchronized (watch) {
                writing = null;
                late = System.nanoTime() - deadline > 0;
            }
            Thread.interrupted(); // the watchdog's, if it came after the write returned
            if (failed != null) {
                drop(c, late ? "no write finished within " + Duration.ofNanos(writeTimeoutNanos).toMillis()
                        + " ms (rollcall.console.write-timeout)" : failed.toString());
            }
        }
        return failed == null;
    }

    private void drop(Client c, String why) {
        log.debug("console events: closing the stream to {}: {}", c.peer(), why);
        synchronized (lock) {
            open--;
        }
        try {
            c.exchange().close();
        } catch (RuntimeException e) {
            // Its connection is gone already.
        }
    }

    private void checkWrite() {
        synchronized (watch) {
            if (writing != null && System.nanoTime() - deadline > 0) {
                sender.interrupt();
            }
        }
    }

    private static byte[] event(FleetJson.Built built) {
        byte[] head = ("id: " + built.snapshot() + "\nevent: fleet\ndata: ").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + built.json().length + 2];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(built.json(), 0, out, head.length, built.json().length);
        out[out.length - 2] = '\n';
        out[out.length - 1] = '\n';
        return out;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Stops the sender and the watchdog and closes every stream (their connections are closed by the server's stop). */
    @Override
    public void close() {
        List<Client> left;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            left = new ArrayList<>(joining);
            joining.clear();
            lock.notifyAll();
        }
        watchdog.shutdownNow();
        sender.interrupt();
        try {
            sender.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        left.addAll(streaming);
        streaming.clear();
        for (Client c : left) {
            try {
                c.exchange().close();
            } catch (RuntimeException e) {
                // closing anyway
            }
        }
    }
}
