package dev.rollcall.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ServiceInfoTest {

    @ParameterizedTest
    @EnumSource(Visibility.class)
    void handlerWithoutVisibilityInheritsTheService(Visibility serviceVisibility) {
        HandlerInfo handler = HandlerInfo.of("run");
        ServiceInfo service = new ServiceInfo("svc", serviceVisibility, List.of(handler));

        assertThat(handler.visibility()).isEmpty();
        assertThat(service.effectiveVisibility(handler)).isEqualTo(serviceVisibility);
    }

    @ParameterizedTest
    @EnumSource(Visibility.class)
    void handlerVisibilityOverridesTheService(Visibility handlerVisibility) {
        for (Visibility serviceVisibility : Visibility.values()) {
            HandlerInfo handler = new HandlerInfo("run", Optional.of(handlerVisibility));
            ServiceInfo service = new ServiceInfo("svc", serviceVisibility, List.of(handler));

            assertThat(service.effectiveVisibility(handler))
                    .as("service %s, handler %s", serviceVisibility, handlerVisibility)
                    .isEqualTo(handlerVisibility);
        }
    }

    @Test
    void mixedHandlersEachGetTheirOwnEffectiveVisibility() {
        HandlerInfo inherits = HandlerInfo.of("a");
        HandlerInfo internal = new HandlerInfo("b", Optional.of(Visibility.INTERNAL));
        ServiceInfo service = new ServiceInfo("svc", Visibility.EXTERNAL, List.of(inherits, internal));

        assertThat(service.effectiveVisibility(inherits)).isEqualTo(Visibility.EXTERNAL);
        assertThat(service.effectiveVisibility(internal)).isEqualTo(Visibility.INTERNAL);
    }

    @Test
    void ofIsPublicWithoutHandlers() {
        ServiceInfo s = ServiceInfo.of("svc");

        assertThat(s.name()).isEqualTo("svc");
        assertThat(s.visibility()).isEqualTo(Visibility.PUBLIC);
        assertThat(s.handlers()).isEmpty();
    }

    @Test
    void handlersAreAnImmutableCopy() {
        List<HandlerInfo> source = new ArrayList<>(List.of(HandlerInfo.of("a")));
        ServiceInfo s = new ServiceInfo("svc", Visibility.PUBLIC, source);

        source.add(HandlerInfo.of("b"));

        assertThat(s.handlers()).extracting(HandlerInfo::name).containsExactly("a");
        assertThatThrownBy(() -> s.handlers().add(HandlerInfo.of("c")))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void rejectsNulls() {
        assertThatThrownBy(() -> new ServiceInfo(null, Visibility.PUBLIC, List.of()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new ServiceInfo("s", null, List.of()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new HandlerInfo(null, Optional.empty()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new HandlerInfo("h", null))
                .isInstanceOf(NullPointerException.class);
    }
}
