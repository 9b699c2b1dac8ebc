package dev.rollcall.discovery.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import org.apache.http.HttpResponse;
import org.apache.http.HttpVersion;
import org.apache.http.entity.BasicHttpEntity;
import org.apache.http.message.BasicHttpResponse;
import org.apache.http.protocol.BasicHttpContext;
import org.apache.http.util.EntityUtils;
import org.junit.jupiter.api.Test;

/** An answer is read up to the limit, whether or not it says its length. */
class BoundedAnswersTest {

    private static final String KEY = "rollcall.discovery.consul.max-response-bytes";

    private static HttpResponse answer(int bytes, boolean announced) {
        BasicHttpResponse response = new BasicHttpResponse(HttpVersion.HTTP_1_1, 200, "OK");
        BasicHttpEntity entity = new BasicHttpEntity();
        entity.setContent(new ByteArrayInputStream(new byte[bytes]));
        entity.setContentLength(announced ? bytes : -1);
        response.setEntity(entity);
        return response;
    }

    @Test
    void anAnswerUpToTheLimitIsReadWhole() throws IOException {
        HttpResponse response = answer(1024, false);
        new BoundedAnswers(1024, KEY).process(response, new BasicHttpContext());

        assertThat(EntityUtils.toByteArray(response.getEntity())).hasSize(1024);
    }

    @Test
    void anAnswerThatAnnouncesMoreIsRefusedBeforeItIsRead() {
        assertThatThrownBy(() -> new BoundedAnswers(1024, KEY).process(answer(1025, true), new BasicHttpContext()))
                .isInstanceOf(BoundedAnswers.TooLarge.class)
                .hasMessageContaining("1025 bytes").hasMessageContaining("1024 bytes").hasMessageContaining(KEY);
    }

    @Test
    void aChunkedAnswerIsCutWhereItPassesTheLimit() throws IOException {
        HttpResponse response = answer(1_000_000, false);
        new BoundedAnswers(1024, KEY).process(response, new BasicHttpContext());

        assertThatThrownBy(() -> EntityUtils.toByteArray(response.getEntity()))
                .isInstanceOf(BoundedAnswers.TooLarge.class)
                .hasMessageContaining("1024 bytes").hasMessageContaining(KEY);
    }
}
