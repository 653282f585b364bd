package org.axe4j.layout;

/**
 * A cursor over one line of text for the recursive-descent readers of layouts, CuTe layouts and
 * boxes: white space is skipped before every token, and errors name the column and draw a caret
 * under the offending character:
 *
 * <pre>
 *   cannot parse layout: expected ')' but found ']' at column 13
 *     S[(8,2):(1,2]
 *                 ^
 * </pre>
 */
public final class TextCursor {
    private final String subject;
    private final String text;
    private int pos;

    /** {@code subject} names what is read ("layout", "CuTe layout", ...) in error messages. */
    public TextCursor(String subject, String text) {
        this.subject = subject;
        this.text = text;
    }

    public String text() {
        return text;
    }

    /** The current offset (0-based). */
    public int position() {
        return pos;
    }

    /** Moves to {@code offset}, e.g. back to the start of a token an error is about. */
    public void moveTo(int offset) {
        pos = offset;
    }

    public void skip() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    /** True at the end of the text (after white space). */
    public boolean atEnd() {
        skip();
        return pos == text.length();
    }

    /** The next character without consuming it ({@code '\0'} at the end). */
    public char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    /** Consumes one character. */
    public void advance() {
        pos++;
    }

    public boolean accept(char c) {
        skip();
        if (pos < text.length() && text.charAt(pos) == c) {
            pos++;
            return true;
        }
        return false;
    }

    public void expect(char c) {
        if (!accept(c)) {
            throw error("expected '" + c + "'");
        }
    }

    /** An optionally signed decimal integer; {@code expected} names what was wanted if none is there. */
    public long integer(String expected) {
        skip();
        int start = pos;
        if (pos < text.length() && (peek() == '-' || peek() == '+')) {
            pos++;
        }
        int digits = pos;
        while (pos < text.length() && Character.isDigit(peek())) {
            pos++;
        }
        if (pos == digits) {
            pos = start;
            throw error(expected);
        }
        try {
            return Long.parseLong(text.substring(start, pos));
        } catch (NumberFormatException e) {
            pos = start;
            throw error("integer does not fit in 64 bits");
        }
    }

    /** An identifier {@code [A-Za-z_][A-Za-z0-9_.]*}. */
    public String identifier(String expected) {
        skip();
        int start = pos;
        if (pos < text.length() && (Character.isLetter(peek()) || peek() == '_')) {
            pos++;
            while (pos < text.length() && (Character.isLetterOrDigit(peek()) || peek() == '_' || peek() == '.')) {
                pos++;
            }
            return text.substring(start, pos);
        }
        throw error(expected);
    }

    /** {@code " at column N"} and the text with a caret under the current character. */
    public String where() {
        return " at column " + (pos + 1) + "\n  " + text + "\n  " + " ".repeat(pos) + "^";
    }

    /** A PARSE error: what was expected, what was found, where. */
    public AxeException error(String what) {
        String found = pos < text.length() ? "'" + text.charAt(pos) + "'" : "end of text";
        return new AxeException(AxeException.Kind.PARSE, "cannot parse " + subject + ": " + what + " but found " + found
                + where());
    }

    /** A PARSE error with a message of its own (no "found" clause). */
    public AxeException errorHere(String message) {
        return new AxeException(AxeException.Kind.PARSE, "cannot parse " + subject + ": " + message + where());
    }
}
