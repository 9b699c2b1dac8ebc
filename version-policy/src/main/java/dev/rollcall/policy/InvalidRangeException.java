package dev.rollcall.policy;

/** A range text that {@link dev.rollcall.api.InternalNpmRange} refuses; the message says why, without repeating the range. */
final class InvalidRangeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    InvalidRangeException(String why) {
        super(why);
    }
}
