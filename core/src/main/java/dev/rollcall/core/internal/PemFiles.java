package dev.rollcall.core.internal;

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

    /** The innermost cause's type and message, for "why the TLS material was refused" (never file content). */
    public static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }
}
