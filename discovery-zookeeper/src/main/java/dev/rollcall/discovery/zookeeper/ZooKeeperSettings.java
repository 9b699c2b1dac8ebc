package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.ConfigurationException;
import dev.rollcall.api.Settings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.common.PathUtils;

/**
 * The connection settings shared by discovery and registration, read and checked from
 * {@code rollcall.discovery.zookeeper.*}. Immutable and thread-safe; {@link #toString()} never
 * shows the password.
 *
 * @param connect           ZooKeeper's connection string, {@code host:port[,host:port...][/chroot]}
 * @param path              the node whose children are the workers, e.g. {@code /rollcall/workers}
 * @param sessionTimeout    the session timeout asked of ZooKeeper: a registered worker that dies
 *                          leaves within it
 * @param connectionTimeout how long one operation waits for a connection before it fails
 * @param backoffInitial    first retry after a failed read
 * @param backoffMax        longest retry delay
 * @param user              digest user, or null
 * @param password          digest password, or null; a secret, never logged
 */
record ZooKeeperSettings(String connect, String path, Duration sessionTimeout, Duration connectionTimeout,
                         Duration backoffInitial, Duration backoffMax, String user, String password) {

    static final String CONNECT = ZooKeeperKeys.relative(ZooKeeperKeys.CONNECT);
    static final String PATH = ZooKeeperKeys.relative(ZooKeeperKeys.PATH);
    static final String SESSION_TIMEOUT = ZooKeeperKeys.relative(ZooKeeperKeys.SESSION_TIMEOUT);
    static final String CONNECTION_TIMEOUT = ZooKeeperKeys.relative(ZooKeeperKeys.CONNECTION_TIMEOUT);
    static final String BACKOFF_INITIAL = ZooKeeperKeys.relative(ZooKeeperKeys.BACKOFF_INITIAL);
    static final String BACKOFF_MAX = ZooKeeperKeys.relative(ZooKeeperKeys.BACKOFF_MAX);
    static final String USER = ZooKeeperKeys.relative(ZooKeeperKeys.USER);
    static final String PASSWORD = ZooKeeperKeys.relative(ZooKeeperKeys.PASSWORD);


    /**
     * Reads every connection key through its catalog declaration and checks them all.
     *
     * @throws ConfigurationException naming the first bad key and its value (never the password)
     */
    static ZooKeeperSettings read(Settings s) {
        // Each value is checked against its own declaration as it is read; the checks across keys follow.
        Optional<String> connect = s.find(ZooKeeperKeys.CONNECT);
        String path = s.get(ZooKeeperKeys.PATH);
        Duration sessionTimeout = s.get(ZooKeeperKeys.SESSION_TIMEOUT);
        Duration connectionTimeout = s.get(ZooKeeperKeys.CONNECTION_TIMEOUT);
        Duration backoffInitial = s.get(ZooKeeperKeys.BACKOFF_INITIAL);
        Duration backoffMax = s.get(ZooKeeperKeys.BACKOFF_MAX);
        Optional<String> user = s.find(ZooKeeperKeys.USER);
        Optional<String> password = s.find(ZooKeeperKeys.PASSWORD);

        String connectText = connect.orElseThrow(() -> ConfigurationException.missing(s.fullKey(CONNECT),
                "ZooKeeper's connection string, such as 10.0.0.1:2181,10.0.0.2:2181 or 127.0.0.1:2181/chroot"));
        checkConnect(s.fullKey(CONNECT), connectText);

        String normalized = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        try {
            PathUtils.validatePath(normalized);
        } catch (IllegalArgumentException e) {
            throw ConfigurationException.invalid(s.fullKey(PATH), path,
                    "an absolute ZooKeeper path such as " + ZooKeeperKeys.PATH.defaultValue() + " (" + e.getMessage() + ")");
        }
        if (normalized.equals("/")) {
            throw ConfigurationException.invalid(s.fullKey(PATH), path,
                    "a node below the root, such as " + ZooKeeperKeys.PATH.defaultValue() + " (its children are the workers)");
        }
        if (sessionTimeout.toMillis() > Integer.MAX_VALUE || connectionTimeout.toMillis() > Integer.MAX_VALUE) {
            String key = sessionTimeout.toMillis() > Integer.MAX_VALUE ? SESSION_TIMEOUT : CONNECTION_TIMEOUT;
            throw ConfigurationException.invalid(s.fullKey(key), s.raw(key).orElse(""), "a duration under 24 days");
        }
        if (backoffMax.compareTo(backoffInitial) < 0) {
            throw ConfigurationException.invalid(s.fullKey(BACKOFF_MAX), s.raw(BACKOFF_MAX).orElse(backoffMax.toString()),
                    "a duration no shorter than " + s.fullKey(BACKOFF_INITIAL) + " (" + backoffInitial + ")");
        }
        if (user.isPresent() != password.isPresent()) {
            String missing = user.isPresent() ? s.fullKey(PASSWORD) : s.fullKey(USER);
            String set = user.isPresent() ? s.fullKey(USER) : s.fullKey(PASSWORD);
            throw ConfigurationException.missing(missing, "a value, since " + set
                    + " is set (digest authentication needs both the user and the password)");
        }
        if (user.isPresent() && user.get().contains(":")) {
            throw ConfigurationException.invalid(s.fullKey(USER), user.get(), "a digest user name without ':'");
        }
        return new ZooKeeperSettings(connectText, normalized, sessionTimeout, connectionTimeout, backoffInitial,
                backoffMax, user.orElse(null), password.orElse(null));
    }

    private static void checkConnect(String key, String value) {
        String expected = "ZooKeeper's connection string: host:port pairs separated by commas, optionally"
                + " followed by a /chroot, such as 10.0.0.1:2181,10.0.0.2:2181";
        int slash = value.indexOf('/');
        String hosts = slash < 0 ? value : value.substring(0, slash);
        if (slash >= 0) {
            try {
                PathUtils.validatePath(value.substring(slash));
            } catch (IllegalArgumentException e) {
                throw ConfigurationException.invalid(key, value, expected + " (bad chroot: " + e.getMessage() + ")");
            }
        }
        if (hosts.isBlank()) {
            throw ConfigurationException.invalid(key, value, expected);
        }
        for (String item : hosts.split(",")) {
            String h = item.strip();
            int colon = h.lastIndexOf(':');
            String host = colon < 0 ? h : h.substring(0, colon);
            if (host.isEmpty() || h.chars().anyMatch(Character::isWhitespace)) {
                throw ConfigurationException.invalid(key, value, expected + " ('" + item + "' is not host:port)");
            }
            if (colon >= 0) {
                try {
                    int port = Integer.parseInt(h.substring(colon + 1));
                    if (port < 1 || port > 65535) {
                        throw new NumberFormatException();
                    }
                } catch (NumberFormatException e) {
                    throw ConfigurationException.invalid(key, value, expected + " ('" + item + "' has no valid port)");
                }
            }
        }
    }

    /**
     * A new Curator client, not yet started, whose operations are not retried ({@code retries} 0, for
     * discovery: its own loop retries, and a failure surfaces within one {@code connection-timeout})
     * or retried once after {@code backoff.initial} (registration: Curator's {@code PersistentNode}
     * works in the background). Digest credentials, if any, are sent on every (re)connection.
     */
    CuratorFramework newClient(int retries) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) connectionTimeout.toMillis())
                .retryPolicy(new RetryNTimes(retries, (int) Math.min(backoffInitial.toMillis(), Integer.MAX_VALUE)));
        if (user != null) {
            b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }
        return b.build();
    }

    /** How long a blocking operation may take at most: a connection wait per attempt, plus margin. */
    long callBudgetMillis() {
        return 2 * connectionTimeout.toMillis() + backoffInitial.toMillis() + 1000;
    }

    /** The path of the worker node {@code id}. */
    String childPath(String id) {
        return path + "/" + id;
    }

    @Override
    public String toString() {
        return "zookeeper[" + connect + ", path=" + path + (user != null ? ", user=" + user : "") + "]";
    }
}
