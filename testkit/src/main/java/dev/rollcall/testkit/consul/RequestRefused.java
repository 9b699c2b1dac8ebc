package dev.rollcall.testkit.consul;

/** A request the stand-in answers with an error status and Consul's message for it. */
final class RequestRefused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;

    RequestRefused(int status, String message) {
        super(message);
        this.status = status;
    }
}
