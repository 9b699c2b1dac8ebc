package dev.rollcall.discovery.etcd;

import dev.rollcall.api.PeerText;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * What a failed call to etcd means (an answer too large, silence, a compacted revision), and how it
 * is told in a log line or an error report: for discovery and registration alike.
 */
final class EtcdFailures {

    private EtcdFailures() {
    }

    /** gRPC refused an answer larger than the client takes ({@code RESOURCE_EXHAUSTED}). */
    static boolean isTooLarge(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof io.grpc.StatusRuntimeException sre
                    && sre.getStatus().getCode() == io.grpc.Status.Code.RESOURCE_EXHAUSTED) {
                return true;
            }
            if (t instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.RESOURCE_EXHAUSTED) {
                return true;
            }
        }
        return false;
    }

    /** No answer came: a deadline ran out, or there is no connection to answer on. */
    static boolean isSilence(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof TimeoutException) {
                return true;
            }
            if (t instanceof io.grpc.StatusRuntimeException sre) {
                io.grpc.Status.Code code = sre.getStatus().getCode();
                return code == io.grpc.Status.Code.DEADLINE_EXCEEDED || code == io.grpc.Status.Code.UNAVAILABLE;
            }
            if (t instanceof EtcdException ee && (ee.getErrorCode() == ErrorCode.DEADLINE_EXCEEDED
                    || ee.getErrorCode() == ErrorCode.UNAVAILABLE)) {
                return true;
            }
        }
        return false;
    }

    static boolean isCompaction(Throwable error) {
        Throwable t = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (t instanceof CompactedException) {
            return true;
        }
        return t instanceof EtcdException e && e.getErrorCode() == ErrorCode.OUT_OF_RANGE
                && String.valueOf(e.getMessage()).contains("compacted");
    }

    /**
     * A short reason for logs and the listener, e.g. {@code UNAVAILABLE: io exception (Connection
     * refused: /127.0.0.1:2379)}; etcd's and gRPC's messages carry no secrets.
     */
    static String describe(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof TimeoutException) {
            return "no answer in time";
        }
        String m = message(c);
        Throwable root = c;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String r = message(root);
        return root == c || m.contains(r) ? m : m + " (" + r + ")";
    }

    /** A status message comes from the server (or whatever answers at its address): escaped and bounded. */
    private static String message(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : PeerText.escape(m);
    }
}
