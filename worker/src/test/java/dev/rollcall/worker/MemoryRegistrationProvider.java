package dev.rollcall.worker;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.RegistrationException;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.api.registration.WorkerRegistrationProvider;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Registration type {@code memory} for this module's tests: keeps entries in a static map, and
 * records whether the worker still answered when its entry was removed. Type {@code refusing}
 * fails every registration, as an unreachable backend would.
 */
public class MemoryRegistrationProvider implements WorkerRegistrationProvider {

    /** Registered workers by URL. */
    static final Map<String, WorkerInfo> REGISTERED = new ConcurrentHashMap<>();
    /** Whether each worker still answered WorkerInfo when it left, by URL. */
    static final Map<String, Boolean> ANSWERED_WHEN_LEAVING = new ConcurrentHashMap<>();

    @Override
    public String type() {
        return "memory";
    }

    @Override
    public WorkerRegistration create(WorkerInfo self, Settings settings) {
        settings.positiveDuration("registration.ttl", Duration.ofSeconds(10));
        String url = self.endpoint().url();
        return new WorkerRegistration() {
            @Override
            public void start() {
                REGISTERED.put(url, self);
            }

            @Override
            public String description() {
                return "memory entry " + url;
            }

            @Override
            public void close() {
                REGISTERED.remove(url);
                boolean answered;
                try {
                    answered = TestProbe.info(self.endpoint(), Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS)
                            != null;
                } catch (ExecutionException | TimeoutException e) {
                    answered = false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    answered = false;
                }
                ANSWERED_WHEN_LEAVING.put(url, answered);
            }
        };
    }

    /** Type {@code refusing}: the backend never acknowledges. */
    public static final class Refusing implements WorkerRegistrationProvider {
        @Override
        public String type() {
            return "refusing";
        }

        @Override
        public WorkerRegistration create(WorkerInfo self, Settings settings) {
            return new WorkerRegistration() {
                @Override
                public void start() {
                    throw new RegistrationException("refusing backend did not acknowledge " + self.endpoint().url());
                }

                @Override
                public String description() {
                    return "nothing";
                }

                @Override
                public void close() {
                }
            };
        }
    }
}
