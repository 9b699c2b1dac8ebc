package dev.rollcall.api.registration;

/**
 * A worker could not register with its discovery backend: the backend was unreachable, refused
 * the credentials, or did not answer within the timeout. The message names the backend and the
 * entry; it never contains a secret.
 */
public class RegistrationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public RegistrationException(String message, Throwable cause) {
        super(message, cause);
    }

    public RegistrationException(String message) {
        super(message);
    }
}
