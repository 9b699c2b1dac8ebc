package dev.rollcall.api.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

class NamedThreadsTest {

    @Test
    void poolThreadsAreDaemonsNumberedAfterThePrefix() {
        ThreadFactory threads = NamedThreads.daemon("rollcall-k8s-client");

        Thread first = threads.newThread(() -> { });
        Thread second = threads.newThread(() -> { });

        assertThat(first.getName()).isEqualTo("rollcall-k8s-client-1");
        assertThat(second.getName()).isEqualTo("rollcall-k8s-client-2");
        assertThat(first.isDaemon()).isTrue();
        assertThat(second.isDaemon()).isTrue();
    }

    @Test
    void aLoopThreadIsADaemonWithExactlyTheNameItsDocumentationQuotes() {
        ThreadFactory threads = NamedThreads.daemonNamed("rollcall-static-file-watch");

        Thread thread = threads.newThread(() -> { });

        assertThat(thread.getName()).isEqualTo("rollcall-static-file-watch");
        assertThat(thread.isDaemon()).isTrue();
    }
}
