package dev.rollcall.worker;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.PemFiles;
import dev.rollcall.api.internal.PemFiles.Kind;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.NettyServerBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The worker's TLS settings ({@code rollcall.worker.tls.*} or the builder's), read and checked at
 * start-up: the server certificate chain and key, and optionally the CA whose client certificates
 * it requires (mutual TLS). Immutable; {@link #toString()} shows paths, never the key.
 */
final class WorkerTls {

    private static final int SCOPE = "rollcall.worker.".length();
    static final String CERT = WorkerKeys.TLS_CERT.name().substring(SCOPE);
    static final String KEY = WorkerKeys.TLS_KEY.name().substring(SCOPE);
    static final String CLIENT_CA = WorkerKeys.TLS_CLIENT_CA.name().substring(SCOPE);

    private final Path cert;
    private final Path clientCa;
    private final ServerCredentials credentials;

    private WorkerTls(Path cert, Path clientCa, ServerCredentials credentials) {
        this.cert = cert;
        this.clientCa = clientCa;
        this.credentials = credentials;
    }

    /**
     * The TLS settings, or null for plaintext. Every key is read (so none is reported unknown);
     * a non-null argument wins over its key.
     *
     * @throws ConfigurationException naming the key and path of a missing, unreadable or wrong
     *                                file, a certificate without its key (or the reverse), or a
     *                                client CA without a server certificate
     */
    static WorkerTls read(Settings worker, Path certFile, Path keyFile, Path clientCaFile) {
        Optional<String> certText = worker.raw(CERT);
        Optional<String> keyText = worker.raw(KEY);
        Optional<String> caText = worker.raw(CLIENT_CA);
        Path cert = certFile != null ? PemFiles.existing(worker.fullKey(CERT), certFile.toString(), Kind.CERTIFICATES)
                : certText.map(v -> PemFiles.existing(worker.fullKey(CERT), v, Kind.CERTIFICATES)).orElse(null);
        Path key = keyFile != null ? PemFiles.existing(worker.fullKey(KEY), keyFile.toString(), Kind.PRIVATE_KEY)
                : keyText.map(v -> PemFiles.existing(worker.fullKey(KEY), v, Kind.PRIVATE_KEY)).orElse(null);
        Path ca = clientCaFile != null
                ? PemFiles.existing(worker.fullKey(CLIENT_CA), clientCaFile.toString(), Kind.CERTIFICATES)
                : caText.map(v -> PemFiles.existing(worker.fullKey(CLIENT_CA), v, Kind.CERTIFICATES)).orElse(null);
        if ((cert == null) != (key == null)) {
            String missing = cert == null ? worker.fullKey(CERT) : worker.fullKey(KEY);
            String set = cert == null ? worker.fullKey(KEY) : worker.fullKey(CERT);
            throw ConfigurationException.missing(missing, "a PEM file, since " + set + " is set (serving TLS"
                    + " needs both " + worker.fullKey(CERT) + " and " + worker.fullKey(KEY) + ")");
        }
        if (cert == null) {
            if (ca != null) {
                throw ConfigurationException.missing(worker.fullKey(CERT), "a PEM certificate and "
                        + worker.fullKey(KEY) + ", since " + worker.fullKey(CLIENT_CA)
                        + " is set (client certificates are asked for over TLS only)");
            }
            return null;
        }
        TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder();
        try {
            byte[] certPem = PemFiles.read(worker.fullKey(CERT), cert, Kind.CERTIFICATES);
            byte[] keyPem = PemFiles.read(worker.fullKey(KEY), key, Kind.PRIVATE_KEY);
            PemFiles.checkPair(worker.fullKey(CERT), cert, certPem, worker.fullKey(KEY), key, keyPem);
            b.keyManager(new ByteArrayInputStream(certPem), new ByteArrayInputStream(keyPem));
            if (ca != null) {
                b.trustManager(new ByteArrayInputStream(
                        PemFiles.read(worker.fullKey(CLIENT_CA), ca, Kind.CERTIFICATES)));
                b.clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
        } catch (IOException e) {
            throw new ConfigurationException(worker.fullKey(CERT), "cannot read the TLS files of "
                    + worker.fullKey("tls.*") + ": " + PemFiles.rootMessage(e));
        }
        ServerCredentials credentials = b.build();
        try {
            // gRPC parses the PEM here; a bad file fails start-up naming its keys.
            NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), credentials);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(worker.fullKey(CERT), worker.fullKey(CERT) + "='" + cert + "' and "
                    + worker.fullKey(KEY) + (ca == null ? "" : ", " + worker.fullKey(CLIENT_CA) + "='" + ca + "'")
                    + ": gRPC cannot serve TLS with these (expected a PEM certificate chain, its PKCS#8"
                    + " private key and PEM CA certificates): " + PemFiles.rootMessage(e));
        }
        return new WorkerTls(cert, ca, credentials);
    }

    ServerCredentials credentials() {
        return credentials;
    }

    boolean mutual() {
        return clientCa != null;
    }

    @Override
    public String toString() {
        return "tls[cert=" + cert + (clientCa == null ? "" : ", client-ca=" + clientCa) + "]";
    }
}
