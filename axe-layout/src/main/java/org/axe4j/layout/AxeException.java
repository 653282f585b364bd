package org.axe4j.layout;

/**
 * The one exception type of the layout algebra. Its {@link Kind} tells a caller (and the
 * command-line tool's exit code) whether the input was unreadable, invalid, valid but
 * not representable by the requested operation, or too large for the request's {@link Budget}.
 */
public final class AxeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, coarsely. */
    public enum Kind {
        /** Text that is not in the layout syntax. */
        PARSE,
        /** A value or argument that breaks a rule (extent &lt;= 0, shape not admitted, overflow, ...). */
        INVALID,
        /** Valid operands whose result cannot be expressed as an Axe layout. */
        NOT_REPRESENTABLE,
        /** A request over one of its {@link Budget} caps (points, answer or request bytes, time) or out of memory. */
        TOO_LARGE;

        /**
         * The lower-case name used in JSON answers: {@code parse}, {@code invalid}, {@code not_representable},
         * {@code too_large}.
         */
        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Kind kind;

    public AxeException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public AxeException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    static AxeException invalid(String format, Object... args) {
        return new AxeException(Kind.INVALID, String.format(format, args));
    }

    static AxeException notRepresentable(String format, Object... args) {
        return new AxeException(Kind.NOT_REPRESENTABLE, String.format(format, args));
    }
}
