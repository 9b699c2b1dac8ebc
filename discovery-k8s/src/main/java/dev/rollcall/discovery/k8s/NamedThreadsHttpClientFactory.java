package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.http.HttpClient;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * fabric8's JDK {@link HttpClient} transport, running its callbacks on the backend's own named
 * executor instead of an anonymous pool. The owner of the executor shuts it down.
 */
final class NamedThreadsHttpClientFactory extends JdkHttpClientFactory {

    private final Executor executor;

    NamedThreadsHttpClientFactory(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    @Override
    protected void additionalConfig(HttpClient.Builder builder) {
        builder.executor(executor);
    }
}
