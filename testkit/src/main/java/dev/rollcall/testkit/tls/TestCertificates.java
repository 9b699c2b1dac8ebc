package dev.rollcall.testkit.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/**
 * Certificates made at test time, written as PEM files, for tests of TLS and mutual TLS: a CA, a
 * server certificate for {@code localhost} and {@code 127.0.0.1}, a client certificate, and a second,
 * unrelated CA ("other") with its own server and client certificates, which the first CA's trust
 * does not accept.
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.generate(tempDir);
 * RollcallWorker.builder().tls(certs.server().certificate(), certs.server().key()).start();
 * resolverConfig.put("rollcall.probe.tls.ca", certs.ca().toString());
 * }</pre>
 *
 * <p>Keys are EC P-256 (fast to make), private keys unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}),
 * valid from an hour ago for a day. Leaf certificates carry both the server and the client
 * extended key usage (etcd uses its server certificate as a client too). Generated with
 * BouncyCastle: a test that uses this class puts {@code org.bouncycastle:bcpkix-jdk18on} on its
 * test class path (the testkit declares it optional). Immutable and thread-safe once made; making
 * a set takes some tens of milliseconds.
 */
public final class TestCertificates {

    /** A certificate (PEM) and its private key (PEM, PKCS#8). */
    public record Issued(Path certificate, Path key) {
    }

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path dir;
    private final Authority ca;
    private final Authority other;
    private final Issued server;
    private final Issued client;
    private final Issued otherServer;
    private final Issued otherClient;

    private TestCertificates(Path dir) {
        this.dir = dir;
        this.ca = new Authority("Rollcall Test CA", dir.resolve("ca.pem"));
        this.other = new Authority("Other Test CA", dir.resolve("other-ca.pem"));
        this.server = issue(ca, "server", "localhost", List.of("localhost", "127.0.0.1"));
        this.client = issue(ca, "client", "rollcall-client", List.of());
        this.otherServer = issue(other, "other-server", "localhost", List.of("localhost", "127.0.0.1"));
        this.otherClient = issue(other, "other-client", "rollcall-client", List.of());
    }

    /** Makes a fresh set and writes it into {@code dir} (created if needed). */
    public static TestCertificates generate(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        return new TestCertificates(dir);
    }

    /** The CA certificate (PEM) that signed {@link #server()} and {@link #client()}: what to trust. */
    public Path ca() {
        return ca.file;
    }

    /** A server certificate for {@code localhost} and {@code 127.0.0.1}, signed by {@link #ca()}. */
    public Issued server() {
        return server;
    }

    /** A client certificate (CN {@code rollcall-client}), signed by {@link #ca()}. */
    public Issued client() {
        return client;
    }

    /** Another CA, which did not sign {@link #server()} or {@link #client()}. */
    public Path otherCa() {
        return other.file;
    }

    /** A server certificate for {@code localhost} and {@code 127.0.0.1} signed by {@link #otherCa()}. */
    public Issued otherServer() {
        return otherServer;
    }

    /** A client certificate signed by {@link #otherCa()}. */
    public Issued otherClient() {
        return otherClient;
    }

    /**
     * A new server certificate signed by {@link #ca()} for exactly {@code names} (DNS names or IP
     * literals), written as {@code <fileName>.pem} and {@code <fileName>-key.pem}.
     */
    public Issued issueServer(String fileName, List<String> names) {
        return issue(ca, fileName, names.isEmpty() ? fileName : names.get(0), names);
    }

    /** The directory the files are in. */
    public Path directory() {
        return dir;
    }

    @Override
    public String toString() {
        return "TestCertificates[" + dir + "]";
    }

    private Issued issue(Authority issuer, String fileName, String commonName, List<String> names) {
        Objects.requireNonNull(fileName, "fileName");
        KeyPair keys = newKeyPair();
        try {
            JcaX509v3CertificateBuilder b = builder(issuer.name, new X500Name("CN=" + commonName), keys);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true,
                    new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
                    new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
            b.addExtension(Extension.authorityKeyIdentifier, false,
                    ext.createAuthorityKeyIdentifier(issuer.certificate));
            if (!names.isEmpty()) {
                List<GeneralName> sans = new ArrayList<>();
                for (String name : names) {
                    sans.add(isIpLiteral(name) ? new GeneralName(GeneralName.iPAddress, name)
                            : new GeneralName(GeneralName.dNSName, name));
                }
                b.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(sans.toArray(GeneralName[]::new)));
            }
            X509Certificate cert = sign(b, issuer.keys.getPrivate());
            Path certFile = dir.resolve(fileName + ".pem");
            Path keyFile = dir.resolve(fileName + "-key.pem");
            writeCertificate(certFile, cert);
            writeKey(keyFile, keys.getPrivate());
            return new Issued(certFile, keyFile);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot make test certificate " + fileName + ": " + e, e);
        }
    }

    /** A self-signed CA and its key. */
    private final class Authority {
        final X500Name name;
        final KeyPair keys;
        final X509Certificate certificate;
        final Path file;

        Authority(String commonName, Path file) {
            this.name = new X500Name("CN=" + commonName);
            this.keys = newKeyPair();
            this.file = file;
            try {
                JcaX509v3CertificateBuilder b = builder(name, name, keys);
                JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
                b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
                b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
                b.addExtension(Extension.subjectKeyIdentifier, false,
                        ext.createSubjectKeyIdentifier(keys.getPublic()));
                this.certificate = sign(b, keys.getPrivate());
                writeCertificate(file, certificate);
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot make test CA " + commonName + ": " + e, e);
            }
        }
    }

    private static JcaX509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIAL.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject,
                keys.getPublic());
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder b, PrivateKey issuerKey)
            throws GeneralSecurityException {
        try {
            ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
            X509CertificateHolder holder = b.build(signer);
            return new JcaX509CertificateConverter().getCertificate(holder);
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static KeyPair newKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot make an EC P-256 key pair: " + e, e);
        }
    }

    private static void writeCertificate(Path file, X509Certificate cert) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
            pem.writeObject(cert);
        }
        Files.writeString(file, text.toString(), StandardCharsets.US_ASCII);
    }

    /** PKCS#8, unencrypted: what gRPC, Netty, Arrow Flight and etcd all read. */
    private static void writeKey(Path file, PrivateKey key) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
            pem.writeObject(new PemObject("PRIVATE KEY", key.getEncoded()));
        }
        Files.writeString(file, text.toString(), StandardCharsets.US_ASCII);
    }

    private static boolean isIpLiteral(String name) {
        if (!name.matches("[0-9.]+|.*:.*")) {
            return false;
        }
        try {
            InetAddress.getByName(name); // a literal: no lookup happens
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
