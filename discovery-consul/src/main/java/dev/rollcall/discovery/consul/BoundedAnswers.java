package dev.rollcall.discovery.consul;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.apache.http.HttpEntity;
import org.apache.http.HttpResponse;
import org.apache.http.HttpResponseInterceptor;
import org.apache.http.entity.HttpEntityWrapper;
import org.apache.http.protocol.HttpContext;

/**
 * Reads no more of an agent's answer than {@code max-response-bytes}: consul-api reads every body
 * whole into a string, so without this an agent (or whatever answers at its address) could make the
 * process hold gigabytes. A larger answer fails its request with {@link TooLarge}, naming the limit
 * and its key, before the rest is read; the connection is then closed, not reused.
 *
 * <p>An interceptor on our HTTP client, applied to every response; stateless and thread-safe.
 */
final class BoundedAnswers implements HttpResponseInterceptor {

    /** An answer larger than the limit; its message names the limit and the key. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(String message) {
            super(message);
        }
    }

    private final long maxBytes;
    private final String key;

    BoundedAnswers(long maxBytes, String key) {
        this.maxBytes = maxBytes;
        this.key = key;
    }

    @Override
    public void process(HttpResponse response, HttpContext context) throws IOException {
        HttpEntity entity = response.getEntity();
        if (entity == null) {
            return;
        }
        if (entity.getContentLength() > maxBytes) {
            throw new TooLarge("the agent's answer of " + entity.getContentLength() + " bytes is larger than the limit"
                    + " of " + maxBytes + " bytes (" + key + "); it was not read");
        }
        response.setEntity(new HttpEntityWrapper(entity) {
            @Override
            public InputStream getContent() throws IOException {
                return new Bounded(super.getContent());
            }

            @Override
            public void writeTo(java.io.OutputStream out) throws IOException {
                try (InputStream in = getContent()) {
                    in.transferTo(out);
                }
            }
        });
    }


    /** Counts what is read and fails once it passes the limit. */
    private final class Bounded extends FilterInputStream {
        private long read;

        Bounded(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count(skipped);
            return skipped;
        }

        private void count(long n) throws TooLarge {
            read += n;
            if (read > maxBytes) {
                throw new TooLarge("the agent's answer is larger than the limit of " + maxBytes + " bytes (" + key
                        + "); reading stopped there");
            }
        }
    }
}
