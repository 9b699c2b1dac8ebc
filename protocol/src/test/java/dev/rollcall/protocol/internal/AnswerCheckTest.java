package dev.rollcall.protocol.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.protocol.v1.HandlerInfo;
import dev.rollcall.protocol.v1.ServiceInfo;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The bounds on a worker's answer that the fault suite's corpus does not reach end to end. */
class AnswerCheckTest {

    /**
     * Every bound on what a worker may send, as an answer that holds {@code n} of what it limits:
     * each is tested at its limit and one past it, here where the bound lives (a bound removed
     * must fail this module's suite, not only an integration test).
     */
    static Stream<Arguments> everyBound() {
        return Stream.of(
                bound("version length", AnswerCheck.MAX_VERSION_CHARS,
                        n -> answer().setVersion("1".repeat(n)).build(),
                        "version is 257 characters long (at most 256)"),
                bound("instance id length", AnswerCheck.MAX_INSTANCE_ID_CHARS,
                        n -> answer().setInstanceId("i".repeat(n)).build(),
                        "instance id is 129 characters long (at most 128)"),
                bound("label count", AnswerCheck.MAX_LABELS, n -> {
                    WorkerInfoResponse.Builder b = answer();
                    for (int i = 0; i < n; i++) {
                        b.putLabels("k" + i, "v");
                    }
                    return b.build();
                }, "129 labels (at most 128)"),
                bound("label key length", AnswerCheck.MAX_LABEL_KEY_CHARS,
                        n -> answer().putLabels("k".repeat(n), "v").build(),
                        "label key '" + "k".repeat(40) + "...(278 more)' is 318 characters long (at most 317)"),
                bound("label value length", AnswerCheck.MAX_LABEL_VALUE_CHARS,
                        n -> answer().putLabels("zone", "v".repeat(n)).build(),
                        "label 'zone' has a value 1025 characters long (at most 1024)"),
                bound("service count", AnswerCheck.MAX_SERVICES, n -> {
                    WorkerInfoResponse.Builder b = answer();
                    for (int i = 0; i < n; i++) {
                        b.addServices(service("s" + i));
                    }
                    return b.build();
                }, "257 services (at most 256)"),
                bound("handler count", AnswerCheck.MAX_HANDLERS, n -> {
                    ServiceInfo.Builder s = service("demo.v1.Orders");
                    for (int i = 0; i < n; i++) {
                        s.addHandlers(HandlerInfo.newBuilder().setName("h" + i));
                    }
                    return answer().addServices(s).build();
                }, "service 'demo.v1.Orders' has 1025 handlers (at most 1024)"),
                bound("service name length", AnswerCheck.MAX_NAME_CHARS,
                        n -> answer().addServices(service("s".repeat(n))).build(),
                        "service name '" + "s".repeat(40) + "...(217 more)' is 257 characters long (at most 256)"),
                bound("handler name length", AnswerCheck.MAX_NAME_CHARS,
                        n -> answer().addServices(service("demo.v1.Orders")
                                .addHandlers(HandlerInfo.newBuilder().setName("h".repeat(n)))).build(),
                        "service 'demo.v1.Orders': handler name '" + "h".repeat(40)
                                + "...(217 more)' is 257 characters long (at most 256)"));
    }

    private static Arguments bound(String what, int limit, IntFunction<WorkerInfoResponse> answerWith,
                                   String onePastProblem) {
        return Arguments.of(Named.of(what, answerWith), limit, onePastProblem);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyBound")
    void acceptsEachBoundAtItsLimitAndRefusesOnePastNamingTheFieldAndTheBound(
            IntFunction<WorkerInfoResponse> answerWith, int limit, String onePastProblem) {
        assertThat(AnswerCheck.problem(answerWith.apply(limit))).as("at the limit, %d", limit).isNull();
        assertThat(AnswerCheck.problem(answerWith.apply(limit + 1))).as("one past the limit, %d", limit + 1)
                .isEqualTo(onePastProblem);
    }

    private static WorkerInfoResponse.Builder answer() {
        return WorkerInfoResponse.newBuilder().setVersion("1.0.0").setInstanceId("i-1");
    }

    @Test
    void acceptsAnAnswerAtEveryBound() {
        WorkerInfoResponse.Builder b = answer().setVersion("1".repeat(AnswerCheck.MAX_VERSION_CHARS))
                .setInstanceId("i".repeat(AnswerCheck.MAX_INSTANCE_ID_CHARS));
        for (int i = 0; i < AnswerCheck.MAX_LABELS - 1; i++) {
            b.putLabels("k" + i, "v");
        }
        b.putLabels("k".repeat(AnswerCheck.MAX_LABEL_KEY_CHARS), "v".repeat(AnswerCheck.MAX_LABEL_VALUE_CHARS));

        assertThat(AnswerCheck.problem(b.build())).isNull();
    }

    @Test
    void refusesAnInstanceIdThatIsTooLongOrHasAControlCharacter() {
        assertThat(AnswerCheck.problem(answer().setInstanceId("i".repeat(129)).build()))
                .isEqualTo("instance id is 129 characters long (at most 128)");
        assertThat(AnswerCheck.problem(answer().setInstanceId("i-1\r").build()))
                .isEqualTo("instance id contains a control character (U+000D) at index 3");
    }

    @Test
    void refusesAnEmptyLabelKey() {
        assertThat(AnswerCheck.problem(answer().putLabels("", "v").build())).isEqualTo("a label has an empty key");
    }

    /** Unicode line and paragraph separators end a line in some log viewers, as \n does. */
    @Test
    void refusesUnicodeLineSeparators() {
        assertThat(AnswerCheck.problem(answer().setVersion("1.0.0\u2028forged").build()))
                .isEqualTo("version contains a control character (U+2028) at index 5");
    }

    @Test
    void acceptsNonAsciiText() {
        assertThat(AnswerCheck.problem(answer().putLabels("zone", "Zürich 区").build())).isNull();
    }

    /** Bidirectional overrides reorder how a line reads (a reason that shows one version and means another). */
    @Test
    void refusesBidirectionalControlsInAVersion() {
        assertThat(AnswerCheck.problem(answer().setVersion("1.0.0\u202e1.2").build()))
                .isEqualTo("version contains a control character (U+202E) at index 5");
    }

    private static ServiceInfo.Builder service(String name) {
        return ServiceInfo.newBuilder().setName(name);
    }

    @Test
    void acceptsServicesAndHandlersAtEveryBound() {
        ServiceInfo.Builder wide = service("s".repeat(AnswerCheck.MAX_NAME_CHARS));
        for (int i = 0; i < AnswerCheck.MAX_HANDLERS; i++) {
            wide.addHandlers(HandlerInfo.newBuilder().setName("Handler" + i));
        }
        WorkerInfoResponse.Builder b = answer().addServices(wide);
        for (int i = 1; i < AnswerCheck.MAX_SERVICES; i++) {
            b.addServices(service("demo.v1.Service" + i).addHandlers(HandlerInfo.newBuilder().setName("Zürich_区")));
        }
        assertThat(AnswerCheck.problem(b.build())).isNull();
    }

    @Test
    void refusesAServiceNameThatIsEmptyTooLongOrHasAControlCharacterOrWhiteSpace() {
        assertThat(AnswerCheck.problem(answer().addServices(service("")).build()))
                .isEqualTo("service name is empty");
        assertThat(AnswerCheck.problem(answer().addServices(service("s".repeat(100_000))).build()))
                .isEqualTo("service name '" + "s".repeat(40) + "...(99960 more)' is 100000 characters long (at most 256)");
        assertThat(AnswerCheck.problem(answer().addServices(service("busy\n[main] INFO FORGED")).build()))
                .isEqualTo("service name 'busy\\n[main] INFO FORGED' contains a control character (U+000A) at index 4");
        assertThat(AnswerCheck.problem(answer().addServices(service("demo.v1 Orders")).build()))
                .isEqualTo("service name 'demo.v1 Orders' contains white space at index 7");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Place\u001b[2J", "Pla ce", "\u2066Place"})
    void refusesAHandlerNameOutsideTheBoundsNamingItsService(String name) {
        String problem = AnswerCheck.problem(answer().addServices(service("demo.v1.Orders")
                .addHandlers(HandlerInfo.newBuilder().setName("Amend"))
                .addHandlers(HandlerInfo.newBuilder().setName(name))).build());
        assertThat(problem).startsWith("service 'demo.v1.Orders': handler name ");
        assertThat(dev.rollcall.api.PeerText.isClean(problem)).as(problem).isTrue();
    }
}
