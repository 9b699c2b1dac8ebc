package dev.rollcall.discovery.etcd;

import dev.rollcall.api.Settings;
import dev.rollcall.local.etcd.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The tests' own view of etcd, through a client of its own (not the code under test): writes,
 * reads, compaction. Every call waits at most 10 s.
 */
final class Etcd implements AutoCloseable {

    private final Client client;

    Etcd(EtcdServer server) {
        this.client = Client.builder().endpoints(server.endpoint()).build();
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Writes {@code value} at {@code key}; returns the revision of the write. */
    long put(String key, String value) {
        return call(() -> client.getKVClient().put(bytes(key), bytes(value)).get(10, TimeUnit.SECONDS))
                .getHeader().getRevision();
    }

    long delete(String key) {
        return call(() -> client.getKVClient().delete(bytes(key)).get(10, TimeUnit.SECONDS)).getHeader().getRevision();
    }

    void deletePrefix(String prefix) {
        call(() -> client.getKVClient().delete(bytes(prefix), DeleteOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS));
    }

    /** Puts all of {@code values} in one transaction: one revision, one watch response. */
    long putAll(Map<String, String> values) {
        Op[] ops = values.entrySet().stream()
                .map(e -> Op.put(bytes(e.getKey()), bytes(e.getValue()), PutOption.DEFAULT))
                .toArray(Op[]::new);
        return call(() -> client.getKVClient().txn().Then(ops).commit().get(10, TimeUnit.SECONDS))
                .getHeader().getRevision();
    }

    Optional<KeyValue> get(String key) {
        List<KeyValue> kvs = call(() -> client.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS)).getKvs();
        return kvs.isEmpty() ? Optional.empty() : Optional.of(kvs.get(0));
    }

    Map<String, String> getPrefix(String prefix) {
        Map<String, String> out = new HashMap<>();
        call(() -> client.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS)).getKvs()
                .forEach(kv -> out.put(kv.getKey().toString(StandardCharsets.UTF_8),
                        kv.getValue().toString(StandardCharsets.UTF_8)));
        return out;
    }

    /** Compacts etcd's history up to the current revision; returns that revision. */
    long compactAll() {
        long rev = call(() -> client.getKVClient().get(bytes("/")).get(10, TimeUnit.SECONDS)).getHeader().getRevision();
        call(() -> client.getKVClient().compact(rev).get(10, TimeUnit.SECONDS));
        return rev;
    }

    void revokeLease(long lease) {
        call(() -> client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS));
    }

    Client client() {
        return client;
    }

    @Override
    public void close() {
        client.close();
    }

    /** Settings scoped to {@code rollcall.discovery.etcd.}, as a provider receives them. */
    static Settings settings(Map<String, String> relative) {
        Map<String, String> full = new HashMap<>();
        relative.forEach((k, v) -> full.put("rollcall.discovery.etcd." + k, v));
        return Settings.of(full).scope("rollcall.discovery.etcd.");
    }

    interface Call<T> {
        T run() throws Exception;
    }

    static <T> T call(Call<T> call) {
        try {
            return call.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException("etcd call failed: " + e, e);
        }
    }
}
