package dev.rollcall.worker;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Whether Arrow can allocate memory on this JVM, checked once when a worker starts, and the JVM flags
 * that make it able to.
 *
 * <p>On JDK 24 and newer Netty runs without {@code sun.misc.Unsafe} unless the JVM is started with
 * {@code --sun-misc-unsafe-memory-access=allow}, and Arrow 19's Netty allocator then fails every
 * allocation with a {@code ClassCastException} ({@code PooledDirectByteBuf} is not a
 * {@code PooledUnsafeDirectByteBuf}). Flight turns that into an {@code INTERNAL} error without a word
 * in the log, so a worker checks at start-up instead and names the flag.
 */
final class ArrowMemory {

    /** The flag JDK 24+ needs for Arrow; JDK 17 refuses it. */
    static final String UNSAFE_FLAG = "--sun-misc-unsafe-memory-access=allow";
    /** The flag every JDK needs for Arrow Flight's DoGet. */
    static final String OPENS_FLAG = "--add-opens=java.base/java.nio=ALL-UNNAMED";

    private ArrowMemory() {
    }

    /**
     * Allocates and frees one small buffer from {@code allocator}.
     *
     * @param own the allocator to close when the check fails (the worker's own), or null
     * @throws IllegalStateException naming the JVM flags when Arrow cannot allocate
     */
    static void checkCanAllocate(BufferAllocator allocator, BufferAllocator own) {
        try (ArrowBuf probe = allocator.buffer(64)) {
            probe.setLong(0, 1L);
        } catch (RuntimeException | LinkageError e) {
            if (own != null) {
                own.close();
            }
            throw new IllegalStateException("Arrow cannot allocate memory on this JVM (Java "
                    + Runtime.version().feature() + "): " + e + ". " + advice(), e);
        }
    }

    /** A hint for a producer's exception that looks like the allocation failure, or "". */
    static String hintFor(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ClassCastException && String.valueOf(t.getMessage()).contains("UnsafeDirectByteBuf")) {
                return " (" + advice() + ")";
            }
        }
        return "";
    }

    private static String advice() {
        return "Start the JVM with " + OPENS_FLAG + (Runtime.version().feature() >= 24 ? " and " + UNSAFE_FLAG
                : "; on Java 24 or newer also with " + UNSAFE_FLAG);
    }
}
