package dev.rollcall.core.internal.settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The coordinator id used when {@code rollcall.subset.coordinator-id} is unset: HOSTNAME, the host's name, a UUID. */
class SubsetSettingsTest {

    @Test
    void theHostnameVariableWinsThenTheHostsNameThenARandomUuid() {
        assertThat(SubsetSettings.defaultCoordinatorId(Map.of("HOSTNAME", " pod-7 ")::get, () -> "host-a"))
                .isEqualTo("pod-7");
        assertThat(SubsetSettings.defaultCoordinatorId(Map.of("HOSTNAME", "")::get, () -> "host-a"))
                .isEqualTo("host-a");
        String random = SubsetSettings.defaultCoordinatorId(Map.<String, String>of()::get, () -> null);
        assertThat(UUID.fromString(random)).as("a UUID").isNotNull();
        assertThat(SubsetSettings.defaultCoordinatorId(Map.<String, String>of()::get, () -> " "))
                .as("a new one each time: nothing to keep a subset by").isNotEqualTo(random);
    }
}
