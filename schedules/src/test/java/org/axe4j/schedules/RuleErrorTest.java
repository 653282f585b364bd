package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A rule that throws anything but {@link Declined} is a bug: a failed decision, or under tests an exception. */
class RuleErrorTest {
    private static final Request CALL = new Request("copy", "llvm", "thread", List.of(), new JsonObject());

    private record Throwing(RuntimeException error) implements Rule {
        public String variant() {
            return "throwing";
        }

        public int priority() {
            return 5;
        }

        public org.axe4j.schedules.plan.SchedulePlan plan(Request call) {
            throw error;
        }
    }

    private static <T> T withStrict(String value, java.util.function.Supplier<T> body) {
        String before = System.getProperty(Rule.STRICT_PROPERTY);
        System.setProperty(Rule.STRICT_PROPERTY, value);
        try {
            return body.get();
        } finally {
            if (before == null) {
                System.clearProperty(Rule.STRICT_PROPERTY);
            } else {
                System.setProperty(Rule.STRICT_PROPERTY, before);
            }
        }
    }

    @Test
    void aThrowingRuleIsAFailedDecisionNamingTheErrorNotADecline() {
        Decision d = withStrict("false", () -> new Throwing(new ArithmeticException("overflow")).decide(CALL));
        assertFalse(d.accepted());
        assertTrue(d.failed());
        assertTrue(d.error().startsWith("ArithmeticException: overflow at "), d.error());
        assertTrue(d.error().endsWith("; call: copy []"), d.error());
        assertTrue(d.reason().startsWith("rule error (a bug in throwing, not a decline): ArithmeticException"));
        assertTrue(d.toJson().contains("\"error\":\"ArithmeticException: overflow"), d.toJson());
    }

    @Test
    void underTestsTheErrorThrowsOutOfDecide() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> withStrict("true",
                () -> new Throwing(new ArithmeticException("overflow")).decide(CALL)));
        assertEquals("rule throwing threw on copy []", e.getMessage());
        assertTrue(e.getCause() instanceof ArithmeticException);
    }

    @Test
    void declinesStayDeclines() {
        Decision d = withStrict("true", () -> new Throwing(Declined.of("not my shape")).decide(CALL));
        assertFalse(d.accepted());
        assertFalse(d.failed());
        assertEquals("not my shape", d.reason());
        assertTrue(d.toJson().contains("\"error\":\"\""));
    }

    @Test
    void theSurefireRunIsStrict() {
        assertEquals("true", System.getProperty(Rule.STRICT_PROPERTY));
    }
}
