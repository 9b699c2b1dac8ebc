package dev.rollcall.cli;

/**
 * The demo found something wrong (a timeout, a wrong answer, a worker that should not have taken
 * part): the message is the one line the user sees, and the demo exits with 1.
 */
final class DemoFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    DemoFailure(String message) {
        super(message);
    }

    DemoFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
