package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LoopbackHostTest {

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "LocalHost", "127.0.0.1", "127.255.255.254", "::1", "[::1]",
            "0:0:0:0:0:0:0:1", "[0000:0000:0000:0000:0000:0000:0000:0001]"})
    void loopbackAsWrittenIsLoopback(String host) {
        assertThat(LoopbackHost.isLiteral(host)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "10.0.0.2",
            "127.0.0.256", "0177.0.0.1", "::2", "[::ffff:127.0.0.1]", "fe80::1", "", "[", "[]", "a:b:c",
            "etcd.internal", "::1%lo"})
    void anythingElseIsNotEvenWhenItLooksLikeLoopback(String host) {
        assertThat(LoopbackHost.isLiteral(host)).isFalse();
    }

    @org.junit.jupiter.api.Test
    void noHostIsNotLoopback() {
        assertThat(LoopbackHost.isLiteral(null)).isFalse();
    }
}
