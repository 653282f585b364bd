package org.axe4j.schedules;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.schedules.plan.PlanJson;
import org.axe4j.schedules.plan.PlanValidator;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * A rule's answer for one call: accepted with a plan (a {@link SchedulePlan} record), declined with the reason the
 * rule states, or failed: the rule threw something other than {@link Declined}, which is a bug in the rule
 * ({@code error} names the exception; such a decision is never accepted, and {@code axe4j.compile} refuses the
 * kernel over it). {@code plan} is null unless accepted.
 */
public record Decision(String variant, int priority, boolean accepted, String reason, SchedulePlan plan,
                       String error) {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    static Decision accept(Rule rule, SchedulePlan plan) {
        if (Boolean.getBoolean(Rule.STRICT_PROPERTY)) {   // under tests every plan is checked against its schema
            PlanValidator.validate(PlanJson.json(plan));
        }
        return new Decision(rule.variant(), rule.priority(), true, "", plan, "");
    }

    static Decision decline(Rule rule, String reason) {
        return new Decision(rule.variant(), rule.priority(), false, reason, null, "");
    }

    static Decision unknown(String variant, String reason) {
        return new Decision(variant, 0, false, reason, null, "");
    }

    /** The rule threw {@code error} while planning {@code call}: a bug, reported with the call it met. */
    static Decision failure(Rule rule, Request call, RuntimeException error) {
        StackTraceElement[] at = error.getStackTrace();
        String where = at.length > 0 ? " at " + at[0] : "";
        String text = error.getClass().getSimpleName() + ": " + error.getMessage() + where;
        return new Decision(rule.variant(), rule.priority(), false, "rule error (a bug in " + rule.variant()
                + ", not a decline): " + text, null, text + "; call: " + call.op() + " " + call.operands());
    }

    public boolean failed() {
        return !error.isEmpty();
    }

    /** The plan as its JSON tree ({@link PlanJson#tree}); empty when not accepted. */
    public Map<String, Object> planJson() {
        return plan == null ? Map.of() : PlanJson.tree(plan);
    }

    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variant", variant);
        m.put("priority", priority);
        m.put("accepted", accepted);
        m.put("reason", reason);
        m.put("plan", planJson());
        m.put("error", error);
        return GSON.toJson(m);
    }
}
