package dev.rollcall.api.internal;

/** A range text that {@link NpmRange} refuses; the message says why, without repeating the range. */
public final class InvalidRangeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    InvalidRangeException(String why) {
        super(why);
    }
}
