package dev.rollcall.core.internal.drain;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The holder ids of one resolver (exact drain): each worker's is HMAC-SHA256 of its endpoint URL
 * under a random secret that lives only in this object, so that only this coordinator and that
 * worker know it. A worker that is sent its own id learns nothing of another worker's, and cannot
 * release that worker in this coordinator's name. The same URL always gets the same id: the id on a
 * worker's watch requests is the one on its releases.
 *
 * <p>Ids are 43 characters of unpadded base64url, within the protocol's printable-ASCII alphabet and
 * its 64-character bound. Neither the secret nor an id is ever logged or printed: {@link #toString()}
 * says nothing of them, and a log line that must tell holders apart uses {@link #tag}.
 * Thread-safe: each thread that asks keeps a {@link Mac} of its own (a watch is started on the probe
 * client's thread, a release on the resolver's), so that converging on many workers looks up no
 * provider per worker.
 */
public final class HolderIds {

    private static final String ALGORITHM = "HmacSHA256";
    private static final int SECRET_BYTES = 32;
    /** How many leading characters of an id {@link #tag} keeps: enough to tell a few holders apart. */
    public static final int TAG_CHARS = 6;

    private final SecretKeySpec key;
    private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

    private HolderIds(byte[] secret) {
        this.key = new SecretKeySpec(secret, ALGORITHM);
    }

    /** With a new secret of 32 bytes from {@link SecureRandom}. */
    public static HolderIds random() {
        byte[] secret = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(secret);
        return new HolderIds(secret);
    }

    /** With {@code secret}, for tests that need two resolvers to agree. */
    static HolderIds withSecret(byte[] secret) {
        return new HolderIds(secret.clone());
    }

    /** The holder id of the worker at {@code url}: the same for the same URL, unguessable without the secret. */
    public String of(String url) {
        byte[] digest = macs.get().doFinal(url.getBytes(StandardCharsets.UTF_8)); // doFinal leaves it ready again
        return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is not available in this JVM", e); // every Java SE has it
        }
    }

    /**
     * What a log line may say of holder id {@code id}: its first {@value #TAG_CHARS} characters and
     * {@code …}; the rest, which is what a release needs, is never written anywhere.
     */
    public static String tag(String id) {
        return id.substring(0, Math.min(TAG_CHARS, id.length() / 2)) + "…"; // a short id is never shown whole
    }

    @Override
    public String toString() {
        return "HolderIds[HMAC-SHA256 of each worker's URL under a secret kept in memory]";
    }
}
