package org.axe4j.schedules.plan;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a plan record as JSON: {@code "kind"} and {@code "schema"} first, then every component under its
 * {@link PlanSchema#fieldName}; a null {@link MayBeAbsent} component is left out, a null other one is an error
 * naming the kind and field. A plan held by a plan is written the same way, with its own kind.
 */
public final class PlanJson {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private PlanJson() {}

    public static String json(SchedulePlan plan) {
        return GSON.toJson(tree(plan));
    }

    /** The plan as a tree of maps, lists, strings, booleans and numbers (Integer for int, Long for long). */
    public static Map<String, Object> tree(SchedulePlan plan) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kind", plan.kind());
        out.put("schema", PlanSchema.VERSION);
        fields((Record) plan, plan.kind(), "", out);
        return out;
    }

    private static void fields(Record record, String kind, String path, Map<String, Object> out) {
        for (RecordComponent c : record.getClass().getRecordComponents()) {
            String field = path + PlanSchema.fieldName(c);
            Object value;
            try {
                value = c.getAccessor().invoke(record);
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new IllegalStateException("plan kind '" + kind + "': field '" + field + "' cannot be read", e);
            }
            if (value == null) {
                if (c.isAnnotationPresent(MayBeAbsent.class)) {
                    continue;
                }
                throw new IllegalStateException("plan kind '" + kind + "': field '" + field + "' is null (only "
                        + "@MayBeAbsent fields may be)");
            }
            out.put(PlanSchema.fieldName(c), value(value, kind, field));
        }
    }

    private static Object value(Object v, String kind, String path) {
        if (v instanceof SchedulePlan p) {   // a plan inside a plan (the boxes of a cut region) keeps its kind
            return tree(p);
        }
        if (v instanceof Record r) {
            Map<String, Object> out = new LinkedHashMap<>();
            fields(r, kind, path + ".", out);
            return out;
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (int i = 0; i < list.size(); i++) {
                out.add(value(list.get(i), kind, path + "[" + i + "]"));
            }
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, x) -> out.put((String) k, value(x, kind, path + "." + k)));
            return out;
        }
        if (v == null) {
            throw new IllegalStateException("plan kind '" + kind + "': field '" + path + "' holds null");
        }
        return v;
    }
}
