package dev.rollcall.core.internal;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import dev.rollcall.api.internal.PemFiles.Kind;
import dev.rollcall.api.internal.PemFiles;
import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Optional;

/**
 * How probes speak TLS to {@code grpcs://} workers: which CAs to trust (default the JDK's trust
 * store), the client certificate for workers that require one, and an optional authority (the name
 * the server certificate is checked against, and sent as SNI) for endpoints whose address is not
 * in the certificate. Internal: not part of Rollcall's public API.
 *
 * <p>The files are read and checked once, when the settings are read; the credentials hold their
 * bytes. Immutable and thread-safe. {@link #toString()} shows paths, never a key.
 */
public final class ProbeTls {

    public static final String CA = "tls.ca";
    public static final String CERT = "tls.cert";
    public static final String KEY = "tls.key";
    public static final String AUTHORITY = "tls.authority";

    /** The JDK's trust store, no client certificate. */
    public static final ProbeTls DEFAULT = new ProbeTls(null, null, null, null, TlsChannelCredentials.create());

    private final Path ca;
    private final Path cert;
    private final Path key;
    private final String authority;
    private final ChannelCredentials credentials;

    private ProbeTls(Path ca, Path cert, Path key, String authority, ChannelCredentials credentials) {
        this.ca = ca;
        this.cert = cert;
        this.key = key;
        this.authority = authority;
        this.credentials = credentials;
    }

    /**
     * Reads {@code tls.ca}, {@code tls.cert}, {@code tls.key} and {@code tls.authority} from
     * {@code probe} (scoped to {@code rollcall.probe.}); a non-null argument wins over its key.
     *
     * @throws ConfigurationException naming the key and the path of a file that is missing,
     *                                unreadable or not what the key needs, or a certificate set
     *                                without its key (or the reverse)
     */
    public static ProbeTls read(Settings probe, Path caFile, Path certFile, Path keyFile, String authorityName) {
        // Read every key first, so that none is reported unknown when one of them is wrong.
        Optional<String> caText = probe.raw(CA);
        Optional<String> certText = probe.raw(CERT);
        Optional<String> keyText = probe.raw(KEY);
        Optional<String> authorityText = probe.raw(AUTHORITY);
        Path ca = caFile != null ? checked(probe.fullKey(CA), caFile.toString(), Kind.CERTIFICATES)
                : caText.map(v -> checked(probe.fullKey(CA), v, Kind.CERTIFICATES)).orElse(null);
        Path cert = certFile != null ? checked(probe.fullKey(CERT), certFile.toString(), Kind.CERTIFICATES)
                : certText.map(v -> checked(probe.fullKey(CERT), v, Kind.CERTIFICATES)).orElse(null);
        Path key = keyFile != null ? checked(probe.fullKey(KEY), keyFile.toString(), Kind.PRIVATE_KEY)
                : keyText.map(v -> checked(probe.fullKey(KEY), v, Kind.PRIVATE_KEY)).orElse(null);
        String authority = authorityName != null ? authorityName : authorityText.orElse(null);
        if (authority != null && (authority.isBlank() || authority.chars().anyMatch(
                c -> Character.isWhitespace(c) || c == '/' || c == '@'))) {
            throw ConfigurationException.invalid(probe.fullKey(AUTHORITY), authority,
                    "a host name (optionally with :port) that the workers' certificates name, such as worker.example.com");
        }
        if ((cert == null) != (key == null)) {
            String missing = cert == null ? probe.fullKey(CERT) : probe.fullKey(KEY);
            String set = cert == null ? probe.fullKey(KEY) : probe.fullKey(CERT);
            throw ConfigurationException.missing(missing, "a PEM file, since " + set + " is set (a client"
                    + " certificate needs both " + probe.fullKey(CERT) + " and " + probe.fullKey(KEY) + ")");
        }
        if (ca == null && cert == null && authority == null) {
            return DEFAULT;
        }
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        try {
            if (ca != null) {
                b.trustManager(new ByteArrayInputStream(PemFiles.read(probe.fullKey(CA), ca, Kind.CERTIFICATES)));
            }
            if (cert != null) {
                byte[] certPem = PemFiles.read(probe.fullKey(CERT), cert, Kind.CERTIFICATES);
                byte[] keyPem = PemFiles.read(probe.fullKey(KEY), key, Kind.PRIVATE_KEY);
                PemFiles.checkPair(probe.fullKey(CERT), cert, certPem, probe.fullKey(KEY), key, keyPem);
                b.keyManager(new ByteArrayInputStream(certPem), new ByteArrayInputStream(keyPem));
            }
        } catch (IOException e) {
            throw new ConfigurationException(probe.fullKey(CA), "cannot read the TLS files of rollcall.probe.tls.*: "
                    + PemFiles.rootMessage(e));
        }
        ChannelCredentials credentials = b.build();
        check(probe, credentials, ca, cert);
        return new ProbeTls(ca, cert, key, authority, credentials);
    }

    private static Path checked(String fullKey, String value, Kind kind) {
        return PemFiles.existing(fullKey, value, kind);
    }

    /** gRPC parses the PEM when a channel is built: build one builder now, so that bad files fail start-up. */
    private static void check(Settings probe, ChannelCredentials credentials, Path ca, Path cert) {
        try {
            NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1), credentials);
        } catch (IllegalArgumentException e) {
            String keys = (ca != null ? probe.fullKey(CA) + "='" + ca + "'" : "")
                    + (ca != null && cert != null ? ", " : "")
                    + (cert != null ? probe.fullKey(CERT) + "='" + cert + "' and " + probe.fullKey(KEY) : "");
            throw new ConfigurationException(cert != null ? probe.fullKey(CERT) : probe.fullKey(CA),
                    keys + ": gRPC cannot use these as TLS settings (expected PEM CA certificates, a PEM"
                            + " certificate chain and its PKCS#8 private key): " + PemFiles.rootMessage(e));
        }
    }

    /** The credentials of {@code grpcs://} probe channels. */
    public ChannelCredentials credentials() {
        return credentials;
    }

    /** The name to check the workers' certificates against instead of the endpoint's host, or null. */
    public String authority() {
        return authority;
    }

    /** Whether probes present a client certificate. */
    public boolean mutual() {
        return cert != null;
    }

    @Override
    public String toString() {
        if (this == DEFAULT) {
            return "tls[trust=jdk]";
        }
        return "tls[trust=" + (ca == null ? "jdk" : ca) + (cert == null ? "" : ", client-cert=" + cert)
                + (authority == null ? "" : ", authority=" + authority) + "]";
    }
}
