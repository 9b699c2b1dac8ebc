package dev.rollcall.console;

import dev.rollcall.api.registry.FleetSnapshot;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's Server-Sent Events: one sender thread ({@code rollcall-console-<name>-events}) builds
 * each new snapshot's JSON once and hands it to every open stream. The resolver's listener only
 * hands the snapshot over ({@link #offer}, latest wins, never blocks); a snapshot that arrives while
 * the sender is still busy replaces the one waiting. At most {@code maxClients} streams are open at
 * once.
 *
 * <p>Each stream is written on its connection's event loop only, in order. A stream whose socket
 * does not take what it was given (a browser that stopped reading, a full TCP window) is skipped
 * until it does, then gets the latest document (never a backlog); one that takes none of what it
 * was given for the write timeout is closed by the server, and the stream goes with it. A comment line every keep-alive interval finds streams whose browser has gone.
 */
final class EventStream implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EventStream.class);
    private static final byte[] KEEPALIVE = ": keepalive\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RETRY = "retry: 2000\n".getBytes(StandardCharsets.US_ASCII);

    /** One open stream; its fields are its event loop's own. */
    private static final class Client {
        final Channel channel;
        long sent = -1;         // the number of the last document written to it
        boolean behind;         // a document was skipped while the socket was full

        Client(Channel channel) {
            this.channel = channel;
        }
    }

    /** A document as the streams get it. */
    private record Event(long snapshot, byte[] bytes) {
    }

    private final FleetJson json;
    private final Timeline timeline;
    private final Supplier<FleetSnapshot> current;
    private final int maxClients;
    private final long keepaliveNanos;
    private final Thread sender;
    private final Map<Channel, Client> clients = new ConcurrentHashMap<>();
    private volatile Event latest;

    private final Object lock = new Object();
    private FleetSnapshot waiting;                              // guarded by lock
    private final List<Client> joining = new ArrayList<>();     // guarded by lock
    private int open;                                           // guarded by lock: joining + streaming
    private boolean closed;                                     // guarded by lock

    private FleetJson.Built lastSent;                           // the sender's own

    EventStream(String name, FleetJson json, Timeline timeline, Supplier<FleetSnapshot> current, int maxClients,
                Duration keepalive) {
        this.json = json;
        this.timeline = timeline;
        this.current = current;
        this.maxClients = maxClients;
        this.keepaliveNanos = keepalive.toNanos();
        this.sender = new Thread(this::run, "rollcall-console-" + name + "-events");
        this.sender.setDaemon(true);
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
     * Takes a connection whose answer has not begun: writes {@code head} ({@code 200}, chunked) and
     * streams to it until it closes. Returns false, writing nothing, when {@code maxClients} streams
     * are open or the console closed. On the connection's event loop.
     */
    boolean open(Channel channel, HttpResponse head) {
        Client c = new Client(channel);
        synchronized (lock) {
            if (closed || open >= maxClients) {
                return false;
            }
            open++;
            joining.add(c);
            lock.notifyAll();
        }
        clients.put(channel, c);
        channel.closeFuture().addListener(f -> {
            clients.remove(channel);
            synchronized (lock) {
                open--;
                joining.remove(c);
            }
        });
        channel.writeAndFlush(head).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        return true;
    }

    /** The socket of {@code channel} takes writes again: it gets the latest document if it missed one. On its loop. */
    void catchUp(Channel channel) {
        Client c = clients.get(channel);
        Event e = latest;
        if (c != null && c.behind && e != null) {
            write(c, e, null);
        }
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
                        // close() interrupts: the loop's condition says whether to stop
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
                    if (clients.isEmpty() && fresh.isEmpty()) {
                        lastSent = null; // nobody to send to: /api/fleet builds its own when asked
                        latest = null;
                    } else if (lastSent == null || next.number() > lastSent.snapshot()) {
                        lastSent = json.publish(next);
                        latest = new Event(lastSent.snapshot(), event(lastSent));
                        Event e = latest;
                        clients.values().stream().filter(c -> !fresh.contains(c)).forEach(c -> send(c, e, null));
                    }
                }
                if (!fresh.isEmpty()) {
                    if (lastSent == null) {
                        FleetSnapshot now = current.get();
                        timeline.record(now);
                        lastSent = json.publish(now);
                        latest = new Event(lastSent.snapshot(), event(lastSent));
                    }
                    Event e = latest;
                    for (Client c : fresh) {
                        send(c, e, RETRY);
                    }
                }
                if (System.nanoTime() - nextKeepalive >= 0) {
                    for (Client c : clients.values()) {
                        c.channel.eventLoop().execute(() -> {
                            if (c.channel.isActive() && c.channel.isWritable() && c.sent >= 0) {
                                c.channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(KEEPALIVE)))
                                        .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
                            }
                        });
                    }
                    nextKeepalive = System.nanoTime() + keepaliveNanos;
                }
            } catch (RuntimeException e) {
                log.warn("console events: cannot send snapshot {}: {}", next == null ? "?" : next.number(), e.toString(), e);
            }
        }
    }

    /** Hands {@code e} to {@code c}'s event loop. */
    private void send(Client c, Event e, byte[] prefix) {
        c.channel.eventLoop().execute(() -> write(c, e, prefix));
    }

    /** On {@code c}'s loop: writes {@code e} unless it has it (or a newer one); skips while its socket is full. */
    private void write(Client c, Event e, byte[] prefix) {
        if (!c.channel.isActive() || e.snapshot() <= c.sent) {
            return;
        }
        if (!c.channel.isWritable() && c.sent >= 0) {
            c.behind = true; // the write timeout closes it if it never drains
            return;
        }
        boolean first = c.sent < 0;
        c.behind = false;
        c.sent = e.snapshot();
        byte[] bytes = e.bytes();
        if (prefix != null && first) {
            bytes = concat(prefix, bytes);
        }
        c.channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(bytes)))
                .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
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

    /** Stops the sender and closes every stream. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            joining.clear();
            lock.notifyAll();
        }
        sender.interrupt();
        try {
            sender.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Client c : clients.values()) {
            c.channel.close();
        }
    }
}
