package org.axe4j.schedules;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.schedules.plan.PlanSchema;
import org.axe4j.schedules.plan.PlanValidator;

/**
 * A rule's answer for one call: accepted with a plan (JSON-ready map), declined with the reason the rule states, or
 * failed: the rule threw something other than {@link Declined}, which is a bug in the rule ({@code error} names the
 * exception; such a decision is never accepted, and {@code axe4j.compile} refuses the kernel over it).
 */
public record Decision(String variant, int priority, boolean accepted, String reason, Map<String, Object> plan,
                       String error) {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    static Decision accept(Rule rule, Map<String, Object> plan) {
        Map<String, Object> versioned = new LinkedHashMap<>();
        versioned.put("kind", plan.get("kind"));
        versioned.put("schema", PlanSchema.VERSION);
        versioned.putAll(plan);
        if (Boolean.getBoolean(Rule.STRICT_PROPERTY)) {   // under tests every plan is checked against its schema
            PlanValidator.validate(GSON.toJson(versioned));
        }
        return new Decision(rule.variant(), rule.priority(), true, "", versioned, "");
    }

    static Decision decline(Rule rule, String reason) {
        return new Decision(rule.variant(), rule.priority(), false, reason, Map.of(), "");
    }

    static Decision unknown(String variant, String reason) {
        return new Decision(variant, 0, false, reason, Map.of(), "");
    }

    /** The rule threw {@code error} while planning {@code call}: a bug, reported with the call it met. */
    static Decision failure(Rule rule, Request call, RuntimeException error) {
        StackTraceElement[] at = error.getStackTrace();
        String where = at.length > 0 ? " at " + at[0] : "";
        String text = error.getClass().getSimpleName() + ": " + error.getMessage() + where;
        return new Decision(rule.variant(), rule.priority(), false, "rule error (a bug in " + rule.variant()
                + ", not a decline): " + text, Map.of(), text + "; call: " + call.op() + " " + call.operands());
    }

    public boolean failed() {
        return !error.isEmpty();
    }

    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variant", variant);
        m.put("priority", priority);
        m.put("accepted", accepted);
        m.put("reason", reason);
        m.put("plan", plan);
        m.put("error", error);
        return GSON.toJson(m);
    }
}
