package org.axe4j.passes.transform;

/**
 * One finding of a layout pass: the rule broken (or the choice made), the function, the buffer or call it is
 * about, the layout involved (empty when none), and a message with the numbers.
 * Text form: {@code [rule] func: subject: message (layout L)}.
 */
public record Diagnostic(String rule, String function, String subject, String layout, String message) {
    @Override
    public String toString() {
        return "[" + rule + "] " + function + ": " + subject + ": " + message
                + (layout.isEmpty() ? "" : " (layout " + layout + ")");
    }
}
