package org.axe4j.schedules;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.util.LinkedHashMap;
import java.util.Map;

/** A rule's answer for one call: accepted with a plan (JSON-ready map) or declined with a reason. */
public record Decision(String variant, int priority, boolean accepted, String reason, Map<String, Object> plan) {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    static Decision accept(Rule rule, Map<String, Object> plan) {
        return new Decision(rule.variant(), rule.priority(), true, "", plan);
    }

    static Decision decline(Rule rule, String reason) {
        return new Decision(rule.variant(), rule.priority(), false, reason, Map.of());
    }

    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variant", variant);
        m.put("priority", priority);
        m.put("accepted", accepted);
        m.put("reason", reason);
        m.put("plan", plan);
        return GSON.toJson(m);
    }
}
