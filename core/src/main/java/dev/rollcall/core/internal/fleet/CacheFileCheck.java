package dev.rollcall.core.internal.fleet;

import dev.rollcall.api.PeerText;
import dev.rollcall.core.internal.settings.CacheSettings;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.Set;

/**
 * Whether the cache file may be trusted before a byte of it is read: a coordinator that starts
 * during an outage probes whatever endpoints the file lists, so a file another user could have
 * written (or swapped in) must not be used.
 *
 * <p>Refused: a symbolic link; anything but a regular file; a file larger than the bound; and on a
 * POSIX filesystem, a file not owned by the process's user, a file its group or others may write,
 * and a folder another user may write (its group, others, or an owner that is neither this user
 * nor root) unless the folder is sticky ({@code /tmp}: only a file's owner may rename or delete it,
 * and the file is ours). On a filesystem without POSIX attributes (Windows) only the link, the kind
 * and the size are checked: owners there are often a group (files an administrator creates belong
 * to Administrators) and access is by ACLs, which this check does not read. Immutable; any thread.
 */
final class CacheFileCheck {

    /** The sticky bit of a folder's mode ({@code unix:mode}), which {@link PosixFilePermission} does not have. */
    private static final int STICKY = 01000;
    private static final Set<PosixFilePermission> OTHERS_MAY_WRITE =
            Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

    private final long maxBytes;
    private final UserPrincipal us;

    /**
     * @param maxBytes the largest file accepted
     * @param us       the process's user; null: found out on first use ({@link #processUser})
     */
    CacheFileCheck(long maxBytes, UserPrincipal us) {
        this.maxBytes = maxBytes;
        this.us = us;
    }

    /**
     * Why {@code file} must not be used, or null when it may.
     *
     * @throws java.nio.file.NoSuchFileException when there is no file
     * @throws IOException                        when its attributes cannot be read
     */
    String problem(Path file) throws IOException {
        BasicFileAttributes basic = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (basic.isSymbolicLink()) {
            return "it is a symbolic link (to " + PeerText.escape(String.valueOf(Files.readSymbolicLink(file)))
                    + "); the cache must be a regular file of its own";
        }
        if (!basic.isRegularFile()) {
            return "it is not a regular file (" + (basic.isDirectory() ? "a folder" : "a device, pipe or socket") + ")";
        }
        if (basic.size() > maxBytes) {
            return "it is " + basic.size() + " bytes, more than " + CacheSettings.MAX_BYTES_KEY + " (" + maxBytes + ")";
        }
        PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS);
        if (posix == null) {
            return null; // see the class comment: what else to check is not portable
        }
        UserPrincipal user = us != null ? us : processUser(file);
        PosixFileAttributes attributes = posix.readAttributes();
        if (!attributes.owner().equals(user)) {
            return notOurs(attributes.owner(), user);
        }
        if (attributes.permissions().stream().anyMatch(OTHERS_MAY_WRITE::contains)) {
            return "its group or others may write it (" + PosixFilePermissions.toString(attributes.permissions())
                    + "); chmod go-w it, or let Rollcall write it anew";
        }
        return folderProblem(file.toAbsolutePath().getParent(), user);
    }

    /** Why a file in {@code folder} could be replaced by another user, or null. */
    private static String folderProblem(Path folder, UserPrincipal user) throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(folder, PosixFileAttributes.class);
        Set<PosixFilePermission> mode = attributes.permissions();
        UserPrincipal owner = attributes.owner();
        boolean othersMayWrite = mode.stream().anyMatch(OTHERS_MAY_WRITE::contains)
                || (mode.contains(PosixFilePermission.OWNER_WRITE) && !owner.equals(user) && !isRoot(owner));
        if (!othersMayWrite || sticky(folder)) {
            return null;
        }
        return "its folder " + folder + " may be written by another user (owner " + owner.getName() + ", "
                + PosixFilePermissions.toString(mode) + ") and is not sticky: the file could be replaced at any"
                + " time; keep the cache in a folder only this user may write";
    }

    private static String notOurs(UserPrincipal owner, UserPrincipal user) {
        return "it is owned by " + owner.getName() + ", not by " + user.getName()
                + " (the user of this process): another user may have written it";
    }

    /** Whether {@code folder}'s sticky bit is set; false where the filesystem does not say. */
    private static boolean sticky(Path folder) {
        try {
            return (((Integer) Files.getAttribute(folder, "unix:mode")) & STICKY) != 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return false; // cannot tell: as if not sticky, which refuses the folder
        }
    }

    private static boolean isRoot(UserPrincipal owner) {
        try {
            return owner.equals(FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("root"));
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * The process's user: {@code user.name} (on Unix the JDK takes it from the real user id), or,
     * when no such user is known, the owner of a file this process creates, as files it writes get.
     */
    static UserPrincipal processUser(Path near) throws IOException {
        UserPrincipalLookupService users = near.getFileSystem().getUserPrincipalLookupService();
        try {
            return users.lookupPrincipalByName(System.getProperty("user.name"));
        } catch (IOException | UnsupportedOperationException unknown) {
            Path probe = Files.createTempFile("rollcall-owner", ".tmp");
            try {
                return Files.getOwner(probe);
            } finally {
                Files.deleteIfExists(probe);
            }
        }
    }
}
