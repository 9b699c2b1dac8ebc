package dev.rollcall.server.internal.grpc;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One snapshot as {@code rollcall.v1.FleetSnapshot} bytes, serialized once and sent as they are to
 * every client that gets it, and, for a published snapshot, its change message against the one
 * published before it, likewise shared. Immutable: nobody writes the arrays after construction.
 *
 * @param number  the snapshot's number
 * @param bytes   the serialized {@code rollcall.v1.FleetSnapshot}, whole
 * @param base    the number {@code changes} is based on; meaningless when {@code changes} is null
 * @param changes the serialized change message ({@code base_number} = {@code base}), or null when
 *                there is none (the first snapshot encoded, or one encoded alone)
 */
record EncodedSnapshot(long number, byte[] bytes, long base, byte[] changes) {

    /** A whole snapshot with no change message. */
    EncodedSnapshot(long number, byte[] bytes) {
        this(number, bytes, 0, null);
    }

    /** What to send a stream that wants change messages and was last sent snapshot {@code held} (-1: none). */
    byte[] bytesAfter(long held) {
        return changes != null && held == base ? changes : bytes;
    }

    /** {@code HoldFleetResponse.snapshot}'s field number. */
    private static final int HOLD_SNAPSHOT_FIELD = 1;

    /**
     * The bytes of a {@code rollcall.v1.HoldFleetResponse} carrying this snapshot: the snapshot's
     * bytes framed as field 1, without parsing them again.
     */
    byte[] holdResponse() {
        int header = CodedOutputStream.computeTagSize(HOLD_SNAPSHOT_FIELD)
                + CodedOutputStream.computeUInt32SizeNoTag(bytes.length);
        byte[] out = new byte[header + bytes.length];
        CodedOutputStream o = CodedOutputStream.newInstance(out);
        try {
            o.writeByteArray(HOLD_SNAPSHOT_FIELD, bytes);
            o.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the array was sized for it
        }
        return out;
    }
}
