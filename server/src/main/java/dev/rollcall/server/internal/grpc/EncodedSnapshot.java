package dev.rollcall.server.internal.grpc;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One snapshot as {@code rollcall.v1.FleetSnapshot} bytes, serialized once and sent as they are to
 * every client that gets it. Immutable: nobody writes {@link #bytes()} after construction.
 *
 * @param number the snapshot's number
 * @param bytes  the serialized {@code rollcall.v1.FleetSnapshot}
 */
record EncodedSnapshot(long number, byte[] bytes) {

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
