package dev.rollcall.api.internal;

import dev.rollcall.api.ConfigurationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Reads the PEM files named by TLS settings and checks them at start-up, so that a missing,
 * unreadable or wrong file fails naming its key and its path. Messages never quote a file's
 * content: a private key must not end up in a log because someone swapped two paths.
 */
public final class PemFiles {

    /** What a file named by a key must hold. */
    public enum Kind {
        CERTIFICATES("PEM certificate(s) (-----BEGIN CERTIFICATE-----)", "CERTIFICATE"),
        PRIVATE_KEY("a PEM PKCS#8 private key (-----BEGIN PRIVATE KEY-----)", "PRIVATE KEY");

        private final String expected;
        private final String label;

        Kind(String expected, String label) {
            this.expected = expected;
            this.label = label;
        }

        public String expected() {
            return expected;
        }
    }

    private PemFiles() {
    }

    /** {@code value} as an absolute path to a readable regular file, or a {@link ConfigurationException} naming {@code key}. */
    public static Path existing(String key, String value, Kind kind) {
        Path p;
        try {
            p = Path.of(value).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw new ConfigurationException(key, key + "='" + value + "': expected the path of a file with "
                    + kind.expected + " (" + e.getReason() + ")");
        }
        if (!Files.isRegularFile(p)) {
            throw new ConfigurationException(key, key + "='" + value + "': expected the path of a file with "
                    + kind.expected + "; " + p + (Files.exists(p) ? " is not a regular file" : " does not exist"));
        }
        if (!Files.isReadable(p)) {
            throw new ConfigurationException(key, key + "='" + value + "': expected a readable file with "
                    + kind.expected + "; " + p + " cannot be read");
        }
        return p;
    }

    /**
     * The bytes of {@code file}, after checking that it holds a PEM block of {@code kind}. A PKCS#1
     * or SEC1 key ({@code BEGIN RSA/EC PRIVATE KEY}) is refused with the command that converts it.
     */
    public static byte[] read(String key, Path file, Kind kind) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ConfigurationException(key, key + "='" + file + "': cannot read it ("
                    + e.getClass().getSimpleName() + ")");
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        if (!text.contains("-----BEGIN " + kind.label + "-----")) {
            String hint = "";
            if (kind == Kind.PRIVATE_KEY && text.matches("(?s).*-----BEGIN (RSA|EC) PRIVATE KEY-----.*")) {
                hint = "; it holds a PKCS#1/SEC1 key: convert it with openssl pkcs8 -topk8 -nocrypt";
            } else if (kind == Kind.PRIVATE_KEY && text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
                hint = "; it holds an encrypted key, which is not supported: decrypt it with openssl pkcs8";
            }
            throw new ConfigurationException(key, key + "='" + file + "': expected " + kind.expected
                    + "; the file holds none" + hint);
        }
        return bytes;
    }

    /**
     * Checks that the private key in {@code keyPem} belongs to the first certificate in
     * {@code certPem} (signs a random message with the key, verifies it with the certificate's
     * public key), so that a key of another certificate fails start-up instead of every handshake.
     * Key types it does not know (neither EC, RSA nor EdDSA) are left to the TLS library.
     *
     * @throws ConfigurationException naming both keys and both paths
     */
    public static void checkPair(String certKey, Path certFile, byte[] certPem, String keyKey, Path keyFile,
                                 byte[] keyPem) {
        java.security.cert.Certificate cert;
        java.security.PrivateKey key;
        try {
            cert = java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(new java.io.ByteArrayInputStream(certPem));
            String algorithm = cert.getPublicKey().getAlgorithm();
            String signature = switch (algorithm) {
                case "EC" -> "SHA256withECDSA";
                case "RSA" -> "SHA256withRSA";
                case "EdDSA", "Ed25519", "Ed448" -> algorithm.equals("Ed448") ? "Ed448" : "Ed25519";
                default -> null;
            };
            if (signature == null) {
                return;
            }
            key = java.security.KeyFactory.getInstance(algorithm.startsWith("Ed") ? "EdDSA" : algorithm)
                    .generatePrivate(new java.security.spec.PKCS8EncodedKeySpec(pkcs8(keyPem)));
            byte[] message = new byte[32];
            new java.security.SecureRandom().nextBytes(message);
            java.security.Signature signer = java.security.Signature.getInstance(signature);
            signer.initSign(key);
            signer.update(message);
            byte[] signed = signer.sign();
            java.security.Signature verifier = java.security.Signature.getInstance(signature);
            verifier.initVerify(cert.getPublicKey());
            verifier.update(message);
            if (verifier.verify(signed)) {
                return;
            }
        } catch (java.security.GeneralSecurityException | IllegalArgumentException e) {
            // A key of another type than the certificate's lands here too: it cannot be its key.
            throw new ConfigurationException(keyKey, keyKey + "='" + keyFile + "': expected the private key of the"
                    + " certificate in " + certKey + "='" + certFile + "' (" + e.getClass().getSimpleName() + ")");
        }
        throw new ConfigurationException(keyKey, keyKey + "='" + keyFile + "': expected the private key of the"
                + " certificate in " + certKey + "='" + certFile + "'; it is another key");
    }

    /** The DER bytes of the first {@code PRIVATE KEY} block. */
    private static byte[] pkcs8(byte[] pem) {
        String text = new String(pem, StandardCharsets.US_ASCII);
        int begin = text.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = text.indexOf("-----END PRIVATE KEY-----", begin);
        if (begin < 0 || end < 0) {
            throw new IllegalArgumentException("no PRIVATE KEY block");
        }
        String body = text.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end).replaceAll("\\s", "");
        return java.util.Base64.getDecoder().decode(body);
    }

    /** The innermost cause's type and message, for "why the TLS material was refused" (never file content). */
    public static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }
}
