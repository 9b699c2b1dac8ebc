package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.PeerText;
import dev.rollcall.api.Settings;
import dev.rollcall.server.ServerKeys;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

/**
 * Lets through only calls whose {@code authorization} metadata is {@code Bearer <token>}, the token
 * read once from {@code rollcall.serve.token-file}. The comparison takes the same time whatever
 * prefix matches; the token is never logged and never put in a status. Thread-safe.
 */
final class BearerToken implements ServerInterceptor {

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);
    private static final String SCHEME = "Bearer ";

    private final byte[] expected; // the token alone

    private BearerToken(byte[] expected) {
        this.expected = expected;
    }

    /**
     * The interceptor of {@code rollcall.serve.token-file}, or null when it is unset.
     *
     * @throws ConfigurationException naming the key and the file when it cannot be read or holds no token
     */
    static BearerToken read(Settings settings) {
        String file = settings.find(ServerKeys.TOKEN_FILE).orElse(null);
        if (file == null) {
            return null;
        }
        String key = ServerKeys.TOKEN_FILE.name();
        String token;
        try {
            token = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException(key, key + "='" + PeerText.escape(file) + "': cannot read the token file ("
                    + e.getClass().getSimpleName() + ")", e);
        }
        if (token.isEmpty() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
            // Never quote the file's content: it is meant to be the secret.
            throw new ConfigurationException(key, key + "='" + PeerText.escape(file) + "': expected one token of"
                    + " visible ASCII characters (what clients send after \"Bearer \"), found "
                    + (token.isEmpty() ? "an empty file" : "white space or other characters inside it"));
        }
        return new BearerToken(token.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        String given = headers.get(AUTHORIZATION);
        // The scheme's case does not matter (RFC 7235); the token's does, compared in constant time.
        boolean bearer = given != null && given.regionMatches(true, 0, SCHEME, 0, SCHEME.length());
        if (!bearer || !MessageDigest.isEqual(expected,
                given.substring(SCHEME.length()).getBytes(StandardCharsets.US_ASCII))) {
            call.close(Status.UNAUTHENTICATED.withDescription(given == null
                    ? "this fleet service requires a bearer token: send the metadata 'authorization: Bearer <token>'"
                    : "the 'authorization' metadata does not carry this fleet service's bearer token"
                            + " ('authorization: Bearer <token>')"), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        return next.startCall(call, headers);
    }
}
