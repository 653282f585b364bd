package org.axe4j.layout;

/**
 * A cursor over one line of text for the recursive-descent readers of layouts, CuTe layouts and
 * boxes. The grammar is ASCII: blanks are space, tab, CR and LF (skipped before every token), digits are
 * {@code 0-9}, identifiers {@code [A-Za-z_][A-Za-z0-9_.]*}; any other character (a full-width or Arabic-Indic
 * digit, an em space) is an error that names its code point. Errors name the column and draw a caret
 * under the offending character (in a window of the text around it when the text is long):
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
        while (pos < text.length() && isBlank(text.charAt(pos))) {
            pos++;
        }
    }

    /** Space, tab, CR or LF: the only blanks of the grammar. */
    public static boolean isBlank(char ch) {
        return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
    }

    /** {@code 0-9}: the only digits of the grammar. */
    public static boolean isDigit(char ch) {
        return ch >= '0' && ch <= '9';
    }

    /** {@code A-Za-z_}: how an identifier starts. */
    public static boolean isIdentifierStart(char ch) {
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
    }

    /** {@code A-Za-z0-9_.}: how an identifier goes on. */
    public static boolean isIdentifierPart(char ch) {
        return isIdentifierStart(ch) || isDigit(ch) || ch == '.';
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
        while (pos < text.length() && isDigit(peek())) {
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
        if (pos < text.length() && isIdentifierStart(peek())) {
            pos++;
            while (pos < text.length() && isIdentifierPart(peek())) {
                pos++;
            }
            return text.substring(start, pos);
        }
        throw error(expected);
    }

    /** {@code " at column N"} and the text with a caret under the current character. */
    public String where() {
        int from = Math.max(0, pos - WINDOW);
        int to = Math.min(text.length(), pos + WINDOW);
        String head = from > 0 ? "..." : "";
        String excerpt = head + text.substring(from, to) + (to < text.length() ? "..." : "");
        return " at column " + (pos + 1) + "\n  " + excerpt + "\n  " + " ".repeat(head.length() + pos - from) + "^";
    }

    /** Characters shown on either side of an error's column. */
    private static final int WINDOW = 60;

    /** A PARSE error: what was expected, what was found, where. */
    public AxeException error(String what) {
        String found = pos >= text.length() ? "end of text"
                : text.charAt(pos) > 126 || (text.charAt(pos) < 32 && !isBlank(text.charAt(pos)))
                ? String.format("U+%04X (not ASCII: the grammar's digits are 0-9, its blanks space, tab, CR, LF)",
                        (int) text.charAt(pos))
                : "'" + text.charAt(pos) + "'";
        return new AxeException(AxeException.Kind.PARSE, "cannot parse " + subject + ": " + what + " but found " + found
                + where());
    }

    /** A PARSE error with a message of its own (no "found" clause). */
    public AxeException errorHere(String message) {
        return new AxeException(AxeException.Kind.PARSE, "cannot parse " + subject + ": " + message + where());
    }
}
