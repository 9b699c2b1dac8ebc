package dev.rollcall.server.internal.grpc;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.PemFiles;
import dev.rollcall.api.internal.PemFiles.Kind;
import dev.rollcall.server.ServerKeys;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.NettyServerBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * The fleet API's TLS ({@code rollcall.serve.tls.*}), read and checked at start-up as the worker
 * reads its own: the certificate chain and key, and optionally the CA whose client certificates it
 * requires (mutual TLS). Stateless.
 */
final class ServeTls {

    private ServeTls() {
    }

    /**
     * The server credentials, or null for plaintext.
     *
     * @throws ConfigurationException naming the key and path of a missing, unreadable or wrong file,
     *                                a certificate without its key (or the reverse), or a client CA
     *                                without a certificate
     */
    static ServerCredentials read(Settings settings) {
        String certKey = ServerKeys.TLS_CERT.name();
        String keyKey = ServerKeys.TLS_KEY.name();
        String caKey = ServerKeys.TLS_CLIENT_CA.name();
        Path cert = settings.find(ServerKeys.TLS_CERT).map(v -> PemFiles.existing(certKey, v, Kind.CERTIFICATES))
                .orElse(null);
        Path key = settings.find(ServerKeys.TLS_KEY).map(v -> PemFiles.existing(keyKey, v, Kind.PRIVATE_KEY))
                .orElse(null);
        Path ca = settings.find(ServerKeys.TLS_CLIENT_CA).map(v -> PemFiles.existing(caKey, v, Kind.CERTIFICATES))
                .orElse(null);
        if ((cert == null) != (key == null)) {
            String missing = cert == null ? certKey : keyKey;
            String set = cert == null ? keyKey : certKey;
            throw ConfigurationException.missing(missing, "a PEM file, since " + set + " is set (serving TLS needs"
                    + " both " + certKey + " and " + keyKey + ")");
        }
        if (cert == null) {
            if (ca != null) {
                throw ConfigurationException.missing(certKey, "a PEM certificate and " + keyKey + ", since " + caKey
                        + " is set (client certificates are asked for over TLS only)");
            }
            return null;
        }
        TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder();
        try {
            byte[] certPem = PemFiles.read(certKey, cert, Kind.CERTIFICATES);
            byte[] keyPem = PemFiles.read(keyKey, key, Kind.PRIVATE_KEY);
            PemFiles.checkPair(certKey, cert, certPem, keyKey, key, keyPem);
            b.keyManager(new ByteArrayInputStream(certPem), new ByteArrayInputStream(keyPem));
            if (ca != null) {
                b.trustManager(new ByteArrayInputStream(PemFiles.read(caKey, ca, Kind.CERTIFICATES)));
                b.clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
        } catch (IOException e) {
            throw new ConfigurationException(certKey, "cannot read the TLS files of rollcall.serve.tls.*: "
                    + PemFiles.rootMessage(e));
        }
        ServerCredentials credentials = b.build();
        try {
            // gRPC parses the PEM here; a bad file fails start-up naming its keys.
            NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), credentials);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(certKey, certKey + "='" + cert + "' and " + keyKey
                    + (ca == null ? "" : ", " + caKey + "='" + ca + "'")
                    + ": gRPC cannot serve TLS with these (expected a PEM certificate chain, its PKCS#8 private key"
                    + " and PEM CA certificates): " + PemFiles.rootMessage(e));
        }
        return credentials;
    }
}
