package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * An option of {@code rollcall probe} or {@code rollcall serve} that stands for a configuration key
 * defaults to that key's default, as its catalog declares it: the help shows what a resolver or the
 * server would use.
 */
class OptionDefaultsFollowTheCatalogTest {

    private static String declaredDefault(String name) {
        Map<String, SettingKey<?>> keys = KeyCatalog.all(OptionDefaultsFollowTheCatalogTest.class.getClassLoader())
                .stream().collect(Collectors.toMap(SettingKey::name, Function.identity()));
        return text(keys.get(name));
    }

    private static <T> String text(SettingKey<T> key) {
        return key.type().text(key.defaultValue());
    }

    @Test
    void probesTimeoutAndConcurrencyDefaultToTheProbeKeysDefaults() {
        CommandSpec probe = new CommandLine(new ProbeCommand()).getCommandSpec();
        assertThat(probe.findOption("--timeout").defaultValue()).isEqualTo(declaredDefault("rollcall.probe.timeout"));
        assertThat(probe.findOption("--concurrency").defaultValue())
                .isEqualTo(declaredDefault("rollcall.probe.concurrency"));
    }

    /**
     * serve's port options have no default of their own, so that the file's key stands when they are
     * left out; their help names the key and the catalog's default.
     */
    @Test
    void servesPortOptionsLeaveTheKeysStandingAndNameTheirDefaults() {
        CommandSpec serve = new CommandLine(new ServeCommand()).getCommandSpec();
        for (String[] option : new String[][] {{"--port", "rollcall.serve.port"},
            {"--http-port", "rollcall.serve.http-port"}}) {
            assertThat(serve.findOption(option[0]).defaultValue()).as(option[0]).isNull();
            assertThat(String.join(" ", serve.findOption(option[0]).description())).as(option[0])
                    .contains("(default: " + option[1] + ", else " + declaredDefault(option[1]) + ")");
        }
    }
}
