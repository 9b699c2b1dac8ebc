package dev.rollcall.discovery.zookeeper;

import dev.rollcall.api.Settings;
import dev.rollcall.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The tests' own view of ZooKeeper, through a Curator client of its own (not the code under test):
 * writes and reads. Every call waits at most about 10 s.
 */
final class ZooKeeper implements AutoCloseable {

    private final CuratorFramework client;

    ZooKeeper(ZooKeeperServer server) {
        this(CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs(10_000).connectionTimeoutMs(10_000).retryPolicy(new RetryOneTime(100)));
    }

    ZooKeeper(CuratorFrameworkFactory.Builder builder) {
        this.client = builder.build();
        client.start();
        try {
            if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the tests' ZooKeeper client did not connect");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Keys relative to {@code rollcall.discovery.zookeeper.}, as the providers receive them. */
    static Settings settings(Map<String, String> relative) {
        Map<String, String> full = new HashMap<>();
        relative.forEach((k, v) -> full.put("rollcall.discovery.zookeeper." + k, v));
        return Settings.of(full).scope("rollcall.discovery.zookeeper.");
    }

    CuratorFramework curator() {
        return client;
    }

    /** Creates or overwrites a persistent node, with its parents. */
    void put(String path, String data) {
        call(() -> {
            byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, bytes);
            } catch (KeeperException.NodeExistsException e) {
                client.setData().forPath(path, bytes);
            }
            return null;
        });
    }

    void delete(String path) {
        call(() -> client.delete().deletingChildrenIfNeeded().forPath(path));
    }

    Optional<String> get(String path) {
        return call(() -> {
            try {
                return Optional.of(new String(client.getData().forPath(path), StandardCharsets.UTF_8));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
        });
    }

    /** The node's stat, or empty when it does not exist. */
    Optional<Stat> stat(String path) {
        return call(() -> Optional.ofNullable(client.checkExists().forPath(path)));
    }

    List<String> children(String path) {
        return call(() -> {
            try {
                return client.getChildren().forPath(path);
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
        });
    }

    interface Call<T> {
        T run() throws Exception;
    }

    static <T> T call(Call<T> call) {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
