package dev.rollcall.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.protocol.v1.WorkerInfoResponse;
import org.junit.jupiter.api.Test;

/** The bounds on a worker's answer that the fault suite's corpus does not reach end to end. */
class AnswerCheckTest {

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
}
