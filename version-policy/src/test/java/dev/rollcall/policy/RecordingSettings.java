package dev.rollcall.policy;

import dev.rollcall.api.Settings;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Settings, for this module's tests, that remember which full keys were read, like Rollcall's unknown-key check does. */
final class RecordingSettings implements Settings {

    private final Settings delegate;
    private final Set<String> read;

    RecordingSettings(Map<String, String> values) {
        this(Settings.of(new HashMap<>(values)), ConcurrentHashMap.newKeySet());
    }

    private RecordingSettings(Settings delegate, Set<String> read) {
        this.delegate = delegate;
        this.read = read;
    }

    Set<String> read() {
        return Set.copyOf(read);
    }

    @Override
    public Optional<String> raw(String key) {
        read.add(delegate.fullKey(key));
        return delegate.raw(key);
    }

    @Override
    public String fullKey(String key) {
        return delegate.fullKey(key);
    }

    @Override
    public Settings scope(String prefix) {
        return new RecordingSettings(delegate.scope(prefix), read);
    }
}
