package dev.rollcall.server.internal.grpc;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * A response marshaller for messages already serialized: {@link #stream} hands gRPC the bytes as
 * they are (a {@link KnownLength} stream, so that the frame is written without copying them into a
 * buffer first), so one snapshot's encoding serves every watcher. Stateless.
 */
final class PreEncoded implements MethodDescriptor.Marshaller<byte[]> {

    static final PreEncoded MARSHALLER = new PreEncoded();

    private PreEncoded() {
    }

    @Override
    public InputStream stream(byte[] value) {
        return new Bytes(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
        try {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The stream gRPC reads one message from; it must know the length up front. */
    private static final class Bytes extends ByteArrayInputStream implements KnownLength {
        Bytes(byte[] bytes) {
            super(bytes);
        }
    }
}
