package dev.rollcall.discovery.consul;

import dev.rollcall.api.ConfigurationException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * An {@link SSLContext} from the PEM files Consul's own tools use ({@code CONSUL_CACERT},
 * {@code CONSUL_CLIENT_CERT}, {@code CONSUL_CLIENT_KEY}): a CA bundle, a client certificate chain,
 * and its key as PKCS#8 ({@code PRIVATE KEY}), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1
 * ({@code EC PRIVATE KEY}, what {@code consul tls cert create} writes). JDK only. Errors name the
 * key and the file, never the key material.
 */
final class PemTls {

    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    private static final char[] NO_PASSWORD = new char[0];

    /** A configured file and the key that named it. */
    record File(String key, Path path) {
    }

    private PemTls() {
    }

    /**
     * @param ca   trusted CAs, or null for the JDK's default trust store
     * @param cert the client certificate chain, or null for none
     * @param key  the client key, with {@code cert}
     */
    static SSLContext sslContext(File ca, File cert, File key) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (ca != null) {
                List<Certificate> cas = certificates(ca);
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                for (int i = 0; i < cas.size(); i++) {
                    trust.setCertificateEntry("ca-" + i, cas.get(i));
                }
                tmf.init(trust);
            } else {
                tmf.init((KeyStore) null);
            }
            KeyManagerFactory kmf = null;
            if (cert != null) {
                List<Certificate> chain = certificates(cert);
                PrivateKey privateKey = privateKey(key);
                if (!fits(chain.get(0).getPublicKey(), privateKey)) {
                    throw problem(key, "the key does not fit the certificate in " + cert.path());
                }
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry("client", privateKey, NO_PASSWORD, chain.toArray(new Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, NO_PASSWORD);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot set up TLS for Consul: " + e.getMessage(), e);
        }
    }

    /** Whether {@code key} is the private half of {@code certified}: a signature one makes, the other checks. */
    static boolean fits(PublicKey certified, PrivateKey key) {
        if (!certified.getAlgorithm().equals(key.getAlgorithm())) {
            return false;
        }
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "EdDSA", "Ed25519", "Ed448" -> key.getAlgorithm();
            default -> null;
        };
        if (algorithm == null) {
            return true;    // a kind we cannot test here; the TLS handshake will tell
        }
        try {
            byte[] probe = "rollcall".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certified);
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    static List<Certificate> certificates(File file) {
        byte[] bytes = read(file);
        try {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(bytes));
            if (certs.isEmpty()) {
                throw problem(file, "it holds no PEM certificate");
            }
            return new ArrayList<>(certs);
        } catch (GeneralSecurityException e) {
            throw problem(file, "it is not a PEM certificate file (" + e.getMessage() + ")");
        }
    }

    static PrivateKey privateKey(File file) {
        String text = new String(read(file), StandardCharsets.US_ASCII);
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            String type = m.group(1);
            if (type.contains("PARAMETERS")) {
                continue;       // "EC PARAMETERS" often precedes "EC PRIVATE KEY"
            }
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(m.group(2));
            } catch (IllegalArgumentException e) {
                throw problem(file, "its " + type + " block is not valid base64");
            }
            byte[] pkcs8 = switch (type) {
                case "PRIVATE KEY" -> der;
                case "RSA PRIVATE KEY" -> Der.pkcs8(Der.RSA_ENCRYPTION, Der.NULL, der);
                case "EC PRIVATE KEY" -> Der.pkcs8(Der.EC_PUBLIC_KEY, Der.sec1Curve(der, file), der);
                case "ENCRYPTED PRIVATE KEY" -> throw problem(file,
                        "the key is encrypted; decrypt it (openssl pkcs8 -in key.pem -out plain.pem) and protect the file instead");
                default -> throw problem(file, "expected a PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block, found " + type);
            };
            for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
                try {
                    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
                } catch (GeneralSecurityException e) {
                    // try the next algorithm
                }
            }
            throw problem(file, "its " + type + " is not an RSA, EC or EdDSA key this JVM can read");
        }
        throw problem(file, "it holds no PEM private key");
    }

    private static byte[] read(File file) {
        try {
            return Files.readAllBytes(file.path());
        } catch (IOException e) {
            throw problem(file, "cannot read it (" + e + ")");
        }
    }

    private static ConfigurationException problem(File file, String why) {
        return new ConfigurationException(file.key(), file.key() + "=" + file.path() + ": " + why);
    }

    /** Just enough DER to wrap PKCS#1 and SEC1 keys in a PKCS#8 envelope. */
    static final class Der {
        static final byte[] RSA_ENCRYPTION = hex("06092a864886f70d010101");
        static final byte[] EC_PUBLIC_KEY = hex("06072a8648ce3d0201");
        static final byte[] NULL = hex("0500");

        private Der() {
        }

        /** PrivateKeyInfo ::= SEQUENCE { INTEGER 0, SEQUENCE { algorithm, parameters }, OCTET STRING key }. */
        static byte[] pkcs8(byte[] algorithm, byte[] parameters, byte[] key) {
            byte[] version = hex("020100");
            byte[] algorithmId = tlv(0x30, concat(algorithm, parameters));
            return tlv(0x30, concat(version, algorithmId, tlv(0x04, key)));
        }

        /** The named-curve OID in the {@code [0]} parameters of a SEC1 ECPrivateKey. */
        static byte[] sec1Curve(byte[] sec1, File file) {
            try {
                int[] outer = header(sec1, 0);
                if ((sec1[0] & 0xff) != 0x30) {
                    throw problem(file, "its EC PRIVATE KEY is not a DER sequence");
                }
                int at = outer[0];
                int end = outer[0] + outer[1];
                while (at < end) {
                    int tag = sec1[at] & 0xff;
                    int[] h = header(sec1, at);
                    if (tag == 0xa0) {
                        int oidAt = h[0];
                        int[] oid = header(sec1, oidAt);
                        byte[] out = new byte[oid[0] + oid[1] - oidAt];
                        System.arraycopy(sec1, oidAt, out, 0, out.length);
                        return out;
                    }
                    at = h[0] + h[1];
                }
            } catch (ArrayIndexOutOfBoundsException e) {
                throw problem(file, "its EC PRIVATE KEY is truncated");
            }
            throw problem(file, "its EC PRIVATE KEY names no curve; convert it to PKCS#8 (openssl pkcs8 -topk8 -nocrypt)");
        }

        /** {offset of the value, length of the value} of the TLV at {@code at}. */
        private static int[] header(byte[] der, int at) {
            int len = der[at + 1] & 0xff;
            int valueAt = at + 2;
            if ((len & 0x80) != 0) {
                int n = len & 0x7f;
                len = 0;
                for (int i = 0; i < n; i++) {
                    len = (len << 8) | (der[valueAt + i] & 0xff);
                }
                valueAt += n;
            }
            return new int[] {valueAt, len};
        }

        static byte[] tlv(int tag, byte[] value) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(tag);
            int len = value.length;
            if (len < 0x80) {
                out.write(len);
            } else {
                int bytes = len > 0xffffff ? 4 : len > 0xffff ? 3 : len > 0xff ? 2 : 1;
                out.write(0x80 | bytes);
                for (int i = bytes - 1; i >= 0; i--) {
                    out.write(len >>> (8 * i));
                }
            }
            out.writeBytes(value);
            return out.toByteArray();
        }

        private static byte[] concat(byte[]... parts) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (byte[] p : parts) {
                out.writeBytes(p);
            }
            return out.toByteArray();
        }

        private static byte[] hex(String s) {
            byte[] b = new byte[s.length() / 2];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
            }
            return b;
        }
    }
}
